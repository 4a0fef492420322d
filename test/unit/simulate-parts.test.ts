import { test } from "node:test";
import assert from "node:assert/strict";
import { segmentIdOf } from "../../src/engine/network/types.js";
import { sampleTrack, timedTrack } from "../../src/engine/simulate/gps-sampler.js";
import { buildLandscape, type Anchor } from "../../src/engine/simulate/population.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import { RoutePlanner, type RoutingProfile } from "../../src/engine/simulate/routes.js";
import { gridNetwork } from "../helpers/grid-network.js";

const network = gridNetwork({ size: 10 });
const land = buildLandscape(network);
const planner = new RoutePlanner(network);

function anchor(wayId: number, index: number, fraction: number): Anchor {
  const segmentIndex = network.indexOfSegment(segmentIdOf(wayId, index))!;
  const coords = network.segments[segmentIndex].coords;
  return {
    segmentIndex,
    fraction,
    point: network.ruler.along(coords, fraction * land.geometryM[segmentIndex]),
  };
}

function plan(from: Anchor, to: Anchor, profile: RoutingProfile = "car") {
  const route = planner.plan(from, to, profile)!;
  const ids = route.steps.map((s) => {
    const seg = network.segments[s.segmentIndex];
    return `${seg.wayId}/${seg.index}${s.forward ? "+" : "-"}`;
  });
  return { ids, route };
}

test("a car drives straight along a street between two points on it", () => {
  const { ids, route } = plan(anchor(1000, 0, 0.5), anchor(1000, 2, 0.5));
  assert.deepEqual(ids, ["1000/0+", "1000/1+", "1000/2+"]);
  assert.ok(Math.abs(route.lengthM - 300) < 0.5, `${route.lengthM}`);
  assert.deepEqual(
    route.steps.map((s) => [s.from, s.to]),
    [
      [0.5, 1],
      [0, 1],
      [0, 0.5],
    ],
  );
});

test("within one segment the route is the part between the points, either way on a two-way street", () => {
  assert.deepEqual(plan(anchor(1000, 4, 0.2), anchor(1000, 4, 0.8)).ids, ["1000/4+"]);
  const back = plan(anchor(1000, 4, 0.8), anchor(1000, 4, 0.2));
  assert.deepEqual(back.ids, ["1000/4-"]);
  assert.ok(Math.abs(back.route.lengthM - 0.6 * 150) < 0.5);
});

test("no route runs a oneway backwards (the shared graph has no backward edge for any mode)", () => {
  const from = anchor(1002, 3, 0.5);
  const to = anchor(1002, 1, 0.5);
  const car = plan(from, to);
  assert.ok(car.ids.length > 3, car.ids.join(" "));
  for (const s of car.route.steps) assert.ok(s.forward || !network.segments[s.segmentIndex].oneway);
  assert.ok(car.route.lengthM > 600);
  assert.deepEqual(plan(from, to, "foot").ids, car.ids, "shortest and fastest agree on a uniform grid");
});

test("cars avoid the pedestrian street that walkers use", () => {
  // Column 7 between rows 3 and 6 is pedestrian (way 2007, pieces 3..5).
  const from = anchor(2007, 3, 0.1);
  const to = anchor(2007, 5, 0.9);
  assert.deepEqual(plan(from, to, "foot").ids, ["2007/3+", "2007/4+", "2007/5+"]);
  assert.equal(planner.plan(from, to, "car"), null, "the anchors lie on a street cars may not enter");
  const car = plan(anchor(2007, 2, 0.5), anchor(2007, 6, 0.5)).ids;
  assert.ok(!car.some((id) => id.startsWith("2007/3") || id.startsWith("2007/4") || id.startsWith("2007/5")));
});

test("trucks detour over the primary arterials where cars cut through side streets", () => {
  // Row 1 from column 1 to column 8: cars stay on residential row 1; trucks go via primary column 3,
  // primary row 5 and secondary column 9.
  const from = anchor(2001, 0, 0.9);
  const to = anchor(2008, 0, 0.9);
  assert.deepEqual(plan(from, to, "car").ids, [
    "2001/0+",
    ...[1, 2, 3, 4, 5, 6, 7].map((c) => `1001/${c}+`),
    "2008/0-",
  ]);
  const truck = plan(from, to, "truck").ids;
  for (const id of ["2003/4+", "1005/3+", "1005/8+", "2009/1-"]) assert.ok(truck.includes(id), id);
});

test("noise-free telematics fixes lie on the route at the interval, with the true speed", () => {
  const { route } = plan(anchor(1000, 0, 0.5), anchor(1000, 2, 0.5));
  const start = Date.UTC(2025, 0, 6, 8);
  const track = timedTrack(land, route.steps, start, (s) => Math.abs(s.to - s.from) * 15); // 10 m/s
  assert.equal(track.times.at(-1), start + 30_000);
  const points = sampleTrack(land, track, { source: "telematics", samplingS: 10, noiseM: 0 }, new Rng(1));
  assert.deepEqual(
    points.map((p) => p.t - start),
    [0, 10_000, 20_000, 30_000],
  );
  const line = network.segmentById(segmentIdOf(1000, 0))!.coords;
  points.forEach((p, k) => {
    const expected = network.ruler.along(
      [line[0], network.segmentById(segmentIdOf(1000, 2))!.coords[1]],
      75 + k * 100,
    );
    assert.ok(network.ruler.distance([p.lon, p.lat], expected) < 0.5, `fix ${k}`);
    assert.ok(Math.abs(p.speed! - 10) < 1.5, `speed ${p.speed}`);
    assert.ok(Math.abs(p.heading! - 90) < 12, `heading ${p.heading}`);
  });
});
