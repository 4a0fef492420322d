import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ACCESS_CAR,
  segmentIdOf,
  type LonLat,
  type RoadClass,
  type Segment,
} from "../../src/engine/network/types.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { boxRing } from "../../src/shared/geometry.js";

let nextNode = 1;
function piece(
  wayId: number,
  index: number,
  highway: string,
  name: string | null,
  coords: LonLat[],
): Segment {
  return {
    id: segmentIdOf(wayId, index),
    wayId,
    index,
    roadClass: (highway.endsWith("_link") ? "ramp" : highway) as RoadClass,
    highway,
    roadType: "Local",
    oneway: false,
    speedKph: 30,
    name,
    lengthM: 80.25,
    fromNode: nextNode++,
    toNode: nextNode++,
    access: ACCESS_CAR,
    coords,
  };
}

/** Country zz around 7.00 E 45.00 N; country yy one degree away. */
const ZZ = [
  piece(10, 0, "residential", "Alpha Street", [
    [7.0, 45.0],
    [7.001, 45.0],
  ]),
  piece(10, 1, "residential", "Alpha Street", [
    [7.001, 45.0],
    [7.002, 45.0],
  ]),
  piece(20, 0, "primary", "Beta Avenue", [
    [7.001, 44.999],
    [7.001, 45.001],
  ]),
  piece(30, 0, "footway", null, [
    [7.01, 45.0],
    [7.011, 45.0],
  ]),
  piece(40, 0, "motorway_link", null, [
    [7.0, 45.002],
    [7.002, 45.002],
  ]),
];
const YY = [
  piece(50, 0, "residential", "Gamma Road", [
    [8.0, 46.0],
    [8.001, 46.0],
  ]),
];

const box = (w: number, s: number, e: number, n: number) => [boxRing([w, s, e, n])];
const ALL_ZZ = box(6.99, 44.99, 7.02, 45.01);

describe("POST /api/v2/osm_ids/search", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
    const info = (country: string, n: number) => ({
      country,
      source: "hand-built",
      segmentCount: n,
      importedAt: "2026-01-01T00:00:00Z",
    });
    await ctx.store.network.replaceCountry(info("zz", ZZ.length), ZZ);
    await ctx.store.network.replaceCountry(info("yy", YY.length), YY);
  });
  after(() => ctx.app.close());

  const search = (payload: unknown, key: string | null = ctx.orgA.key) =>
    ctx.app.inject({
      method: "POST",
      url: key ? `/api/v2/osm_ids/search?key=${key}` : "/api/v2/osm_ids/search",
      payload: payload as object,
    });
  const polygon = (coordinates: unknown, extra: object = {}) => ({
    geometry: { polygon: { type: "polygon", coordinates } },
    ...extra,
  });
  const radius = (coordinates: number[], buffer: number, unit: string, extra: object = {}) => ({
    geometry: { radius: { point: { type: "point", coordinates }, buffer, unit } },
    ...extra,
  });
  const ids = async (payload: unknown) => {
    const res = await search(payload);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as unknown[][]).map((row) => row[0]);
  };

  it("lists each way meeting a polygon once, with its whole-way figures", async () => {
    const res = await search(polygon(box(6.9995, 44.9995, 7.0005, 45.0005)));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      status: "success",
      columns: ["osm_id", "road_classification", "osm_segment_count", "name", "length_m", "country"],
      data: [[10, "residential", 2, "Alpha Street", 160.5, "zz"]],
    });
  });

  it("finds a line crossing the polygon between its vertices", async () => {
    // A thin box across Alpha Street's second piece and nothing else: no vertex lies inside.
    assert.deepEqual(await ids(polygon(box(7.0014, 44.9999, 7.0016, 45.0001))), [10]);
  });

  it("excludes ways inside a hole", async () => {
    const withHole = [...ALL_ZZ, ...box(7.005, 44.995, 7.015, 45.005)];
    assert.deepEqual(await ids(polygon(withHole)), [10, 20, 40]);
  });

  it("searches every imported network unless a country is given", async () => {
    const everywhere = box(6.0, 44.0, 9.0, 47.0);
    assert.deepEqual(await ids(polygon(everywhere)), [10, 20, 30, 40, 50]);
    const res = await search(polygon(everywhere, { country: "YY" }));
    assert.deepEqual(res.json().data, [[50, "residential", 1, "Gamma Road", 80.3, "yy"]]);
  });

  it("filters by roadway classification, by reported class or raw link highway", async () => {
    assert.deepEqual(await ids(polygon(ALL_ZZ, { roadway_classification: { include: ["primary"] } })), [20]);
    assert.deepEqual(await ids(polygon(ALL_ZZ, { roadway_classification: { include: ["Ramp"] } })), [40]);
    assert.deepEqual(
      await ids(polygon(ALL_ZZ, { roadway_classification: { include: ["motorway_link", "footway"] } })),
      [30, 40],
    );
  });

  it("selects by radius measured to the segment line, in several units", async () => {
    // 0.0001° of latitude north of the footway's middle: about 11 m from the line, 40 m from its ends.
    const near = [7.0105, 45.0001];
    assert.deepEqual(await ids(radius(near, 0.02, "km")), [30]);
    assert.deepEqual(await ids(radius(near, 20, "m")), [30]);
    assert.deepEqual(await ids(radius(near, 50, "ft")), [30]);
    assert.deepEqual(await ids(radius(near, 0.01, "MI")), [30]);
    assert.deepEqual(await ids(radius(near, 5, "m")), []);
    assert.deepEqual(await ids(radius([7.001, 45.0], 0.5, "mile")), [10, 20, 30, 40]);
  });

  it("accepts geometry types and keys in any case", async () => {
    const body = {
      geometry: { Polygon: { Type: "Polygon", Coordinates: box(6.9995, 44.9995, 7.0005, 45.0005) } },
    };
    assert.deepEqual(await ids(body), [10]);
    const point = {
      geometry: {
        radius: { point: { type: "Point", coordinates: [7.0105, 45.0001] }, buffer: 20, unit: "m" },
      },
    };
    assert.deepEqual(await ids(point), [30]);
  });

  const rejects = async (payload: unknown, status: number, field?: string) => {
    const res = await search(payload);
    assert.equal(res.statusCode, status, res.body);
    const body = res.json();
    assert.equal(body.status, "error");
    if (field) assert.equal(body.error.field, field, JSON.stringify(body));
    assert.doesNotMatch(res.body, /at .*\.ts:\d+/);
    return body;
  };

  it("rejects a body without geometry or with both selectors", async () => {
    await rejects({}, 400, "geometry");
    await rejects({ geometry: {} }, 400, "geometry");
    const both = { geometry: { ...polygon(ALL_ZZ).geometry, ...radius([7, 45], 1, "km").geometry } };
    await rejects(both, 400, "geometry");
    await rejects(
      { geometry: { nearest: { point: { type: "point", coordinates: [7, 45] } } } },
      400,
      "geometry.nearest",
    );
  });

  it("rejects bad units, buffers and coordinates", async () => {
    await rejects(radius([7, 45], 1, "furlong"), 400, "geometry.radius.unit");
    await rejects(radius([7, 45], 0, "km"), 400, "geometry.radius.buffer");
    await rejects(radius([7, 45], 51, "km"), 400, "geometry.radius.buffer");
    await rejects(radius([45, 97], 1, "km"), 400, "geometry.radius.point.coordinates");
    await rejects(radius([190, 45], 1, "km"), 400, "geometry.radius.point.coordinates");
    await rejects(radius([7], 1, "km"), 400, "geometry.radius.point.coordinates");
    await rejects(polygon(box(7, 45, 181, 46)), 400, "geometry.polygon.coordinates[0][1]");
    await rejects(
      { geometry: { polygon: { type: "linestring", coordinates: box(7, 45, 8, 46) } } },
      400,
      "geometry.polygon.type",
    );
  });

  it("rejects an open ring, an unknown class and an unknown country", async () => {
    const open = [
      box(7, 45, 8, 46)[0]
        .slice(0, 4)
        .concat([[7.5, 45.5]]),
    ];
    await rejects(polygon(open), 400, "geometry.polygon.coordinates[0]");
    await rejects(
      polygon(ALL_ZZ, { roadway_classification: { include: ["highway"] } }),
      400,
      "roadway_classification.include[0]",
    );
    const body = await rejects(polygon(ALL_ZZ, { country: "xx" }), 404, "country");
    assert.equal(body.error.code, "unknown_country");
  });

  it("requires a key", async () => {
    const res = await search(polygon(ALL_ZZ), null);
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error.code, "unauthorized");
  });
});
