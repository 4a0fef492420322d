import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Network } from "../../src/engine/network/network.js";
import { compileZoneSet, endZonesAt } from "../../src/engine/zones/compile.js";
import { axisAlignedBox, VisitList, ZoneLookup } from "../../src/engine/zones/lookup.js";
import type { LonLat } from "../../src/engine/network/types.js";
import { at, seg } from "../helpers/network.js";

const network = new Network("xx", [
  seg(1, 0, 1, 2, [
    [0, 0],
    [300, 0],
  ]),
]);
const ring = (points: LonLat[]) => ({ type: "Polygon", coordinates: [[...points, points[0]]] });
// A 3 × 2 grid of rectangles sharing edges, a triangle over part of it, and a rectangle with a hole.
const cells = Array.from({ length: 6 }, (_, i) => {
  const [x, y] = [(i % 3) * 100, Math.floor(i / 3) * 100];
  return ring([at(x, y), at(x + 100, y), at(x + 100, y + 100), at(x, y + 100)]);
});
const triangle = ring([at(50, 50), at(250, 50), at(150, 180)]);
const holed = {
  type: "Polygon",
  coordinates: [
    [at(0, 0), at(300, 0), at(300, 200), at(0, 200), at(0, 0)],
    [at(100, 50), at(200, 50), at(200, 150), at(100, 150), at(100, 50)],
  ],
};
const features = [...cells, triangle, holed].map((geometry, i) => ({
  geometry,
  properties: { name: `Z${i}`, is_pass: 0 },
}));
const set = compileZoneSet(features, network);

describe("trip-end zones through the lookup", () => {
  it("takes only one-ring axis-aligned rectangles as boxes", () => {
    assert.ok(axisAlignedBox(set.endZones[0].polygons));
    assert.equal(axisAlignedBox(set.endZones[6].polygons), null, "triangle");
    assert.equal(axisAlignedBox(set.endZones[7].polygons), null, "a hole");
  });

  it("finds the zones the polygon test finds, on shared edges and corners too", () => {
    const lookup = new ZoneLookup(set);
    const out = new VisitList();
    // Every corner coordinate crossed with every other (edges and corners shared by 2–4 cells), the
    // midpoints between them, and points just off them.
    const xs = [...new Set(cells.flatMap((c) => c.coordinates[0].map((p) => p[0])))];
    const ys = [...new Set(cells.flatMap((c) => c.coordinates[0].map((p) => p[1])))];
    const between = (v: number[]) => v.flatMap((a, i) => v.slice(i + 1).map((b) => (a + b) / 2));
    const near = (v: number[]) => v.flatMap((a) => [a - 1e-9, a + 1e-9]);
    const xAll = [...xs, ...between(xs), ...near(xs)];
    const yAll = [...ys, ...between(ys), ...near(ys)];
    let onSeveral = 0;
    for (const x of xAll)
      for (const y of yAll) {
        out.clear();
        lookup.endZones([x, y], 0, out);
        const found = Array.from(out.zones.subarray(0, out.count));
        assert.deepEqual(found, endZonesAt(set, [x, y]), `at ${x}, ${y}`);
        if (found.filter((z) => z < 6).length > 1) onSeveral++;
      }
    assert.ok(onSeveral > 10, "points on shared edges count in every cell they touch");
  });
});
