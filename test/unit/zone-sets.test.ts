import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DomainError, ValidationError } from "../../src/domain/errors.js";
import { type NormalisedZoneSet, MAX_ZONES_PER_SET } from "../../src/domain/zone-sets.js";
import { validateZoneSetRequest } from "../../src/app/zone-sets.js";
import { planZoneUpload, splitByGeohash } from "../../src/domain/zone-split.js";
import { storeNetworks } from "../../src/app/networks.js";
import type { LonLat, Segment } from "../../src/engine/network/types.js";
import { segmentIdOf } from "../../src/engine/network/types.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { ZoneFeature } from "../../src/domain/records.js";
import { makeOrg } from "../helpers/app.js";

const store = new SqliteStore(":memory:");
const networks = storeNetworks(store.network);
const org = await makeOrg(store, "Unit Org");
const other = await makeOrg(store, "Other Org");
const ctx = { store, networks, orgId: org.orgId };

const ring = (lon: number, lat: number, d = 0.01): number[][] => [
  [lon, lat],
  [lon + d, lat],
  [lon + d, lat + d],
  [lon, lat + d],
  [lon, lat],
];
const polygonZone = (props: Record<string, unknown> = {}, lon = 11.5, lat = 48.1) => ({
  type: "Feature",
  geometry: { type: "Polygon", coordinates: [ring(lon, lat)] },
  properties: { name: "Zone", ...props },
});
const lineZone = (
  props: Record<string, unknown> = {},
  coordinates: unknown = [
    [11.5, 48.1],
    [11.51, 48.11],
  ],
) => ({
  type: "Feature",
  geometry: { type: "LineString", coordinates },
  properties: { name: "Road", ...props },
});
const request = (features: unknown[], extra: Record<string, unknown> = {}) => ({
  zones: { type: "FeatureCollection", features },
  insight_login_email: org.email,
  ...extra,
});

async function issuesOf(fn: () => Promise<unknown>): Promise<{ field: string; message: string }[]> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ValidationError) return e.issues;
    throw e;
  }
  assert.fail("expected a ValidationError");
}

const validate = async (body: unknown) => await validateZoneSetRequest(body, ctx);
const P = "zones.features[0].properties";
const calibrated = {
  is_pass: 1,
  calibration_type: "AADT",
  calibration_value: 12000,
  personal_traffic_ratio: 0.96,
  medium_commercial_ratio: 0.02,
  heavy_commercial_ratio: 0.02,
};

interface Case {
  rule: string;
  zone: object;
  extra?: Record<string, unknown>;
  /** Expected issue fields, in order; absent = accepted. */
  rejects?: string[];
}

const cases: Case[] = [
  { rule: "name required", zone: polygonZone({ name: undefined }), rejects: [`${P}.name`] },
  { rule: "name not blank", zone: polygonZone({ name: "   " }), rejects: [`${P}.name`] },
  { rule: "name is a string", zone: polygonZone({ name: 7 }), rejects: [`${P}.name`] },
  { rule: "name of 50 characters", zone: polygonZone({ name: "x".repeat(50) }) },
  { rule: "name of 51 characters", zone: polygonZone({ name: "x".repeat(51) }), rejects: [`${P}.name`] },
  { rule: "id null", zone: polygonZone({ id: null }) },
  { rule: "id positive integer", zone: polygonZone({ id: 17 }) },
  { rule: "id 0", zone: polygonZone({ id: 0 }), rejects: [`${P}.id`] },
  { rule: "id fraction", zone: polygonZone({ id: 1.5 }), rejects: [`${P}.id`] },
  { rule: "id string", zone: polygonZone({ id: "3" }), rejects: [`${P}.id`] },
  { rule: "is_pass 1 on polygon", zone: polygonZone({ is_pass: 1 }) },
  { rule: "is_pass 2", zone: polygonZone({ is_pass: 2 }), rejects: [`${P}.is_pass`] },
  { rule: "is_pass true", zone: polygonZone({ is_pass: true }), rejects: [`${P}.is_pass`] },
  { rule: "line is_pass 1", zone: lineZone({ is_pass: 1 }) },
  { rule: "line is_pass 0", zone: lineZone({ is_pass: 0 }), rejects: [`${P}.is_pass`] },
  { rule: "direction on pass-through", zone: polygonZone({ is_pass: 1, direction: 359 }) },
  { rule: "direction 360", zone: polygonZone({ is_pass: 1, direction: 360 }), rejects: [`${P}.direction`] },
  { rule: "direction -1", zone: polygonZone({ is_pass: 1, direction: -1 }), rejects: [`${P}.direction`] },
  { rule: "direction fraction", zone: lineZone({ direction: 12.5 }), rejects: [`${P}.direction`] },
  { rule: "direction needs is_pass", zone: polygonZone({ direction: 90 }), rejects: [`${P}.direction`] },
  { rule: "is_bidi with direction", zone: lineZone({ direction: 90, is_bidi: 1 }) },
  { rule: "is_bidi 0 alone", zone: polygonZone({ is_bidi: 0 }) },
  { rule: "is_bidi without direction", zone: lineZone({ is_bidi: 1 }), rejects: [`${P}.is_bidi`] },
  { rule: "is_bidi 2", zone: lineZone({ direction: 9, is_bidi: 2 }), rejects: [`${P}.is_bidi`] },
  { rule: "zone geom_type agrees", zone: lineZone({ geom_type: "LineString" }) },
  { rule: "zone geom_type disagrees", zone: lineZone({ geom_type: "polygon" }), rejects: [`${P}.geom_type`] },
  { rule: "zone geom_type unknown", zone: polygonZone({ geom_type: "area" }), rejects: [`${P}.geom_type`] },
  { rule: "road_type", zone: lineZone({ road_type: "primary" }) },
  { rule: "road_type unknown", zone: lineZone({ road_type: "Motorway" }), rejects: [`${P}.road_type`] },
  { rule: "road_type on polygon", zone: polygonZone({ road_type: "Local" }), rejects: [`${P}.road_type`] },
  { rule: "gate", zone: lineZone({ gate_lat: 48.1, gate_lng: 11.5, gate_size: 30 }) },
  { rule: "gate_lat 91", zone: lineZone({ gate_lat: 91, gate_lng: 11 }), rejects: [`${P}.gate_lat`] },
  { rule: "gate_lng -181", zone: lineZone({ gate_lat: 1, gate_lng: -181 }), rejects: [`${P}.gate_lng`] },
  { rule: "gate_lat alone", zone: lineZone({ gate_lat: 48 }), rejects: [`${P}.gate_lng`] },
  {
    rule: "gate_size 0",
    zone: lineZone({ gate_lat: 1, gate_lng: 1, gate_size: 0 }),
    rejects: [`${P}.gate_size`],
  },
  {
    rule: "gate_size 1001",
    zone: lineZone({ gate_lat: 1, gate_lng: 1, gate_size: 1001 }),
    rejects: [`${P}.gate_size`],
  },
  { rule: "gate_size without gate", zone: lineZone({ gate_size: 10 }), rejects: [`${P}.gate_size`] },
  {
    rule: "gate on polygon",
    zone: polygonZone({ gate_lat: 1, gate_lng: 1 }),
    rejects: [`${P}.gate_lat`, `${P}.gate_lng`],
  },
  { rule: "calibration", zone: polygonZone(calibrated), extra: { with_calibration: true } },
  {
    rule: "calibration without with_calibration",
    zone: lineZone({ calibration_type: "ADT", calibration_value: 5 }),
    rejects: [`${P}.calibration_type`, `${P}.calibration_value`],
  },
  {
    rule: "calibration on a non-pass-through zone",
    zone: polygonZone({ ...calibrated, is_pass: 0 }),
    extra: { with_calibration: true },
    rejects: [
      `${P}.calibration_type`,
      `${P}.calibration_value`,
      `${P}.personal_traffic_ratio`,
      `${P}.medium_commercial_ratio`,
      `${P}.heavy_commercial_ratio`,
    ],
  },
  {
    rule: "calibration_type unknown",
    zone: lineZone({ ...calibrated, calibration_type: "DAILY" }),
    extra: { with_calibration: true },
    rejects: [`${P}.calibration_type`],
  },
  {
    rule: "calibration_value missing",
    zone: lineZone({ ...calibrated, calibration_value: null }),
    extra: { with_calibration: true },
    rejects: [`${P}.calibration_value`],
  },
  {
    rule: "calibration_value 1,000,001",
    zone: lineZone({ ...calibrated, calibration_value: 1_000_001 }),
    extra: { with_calibration: true },
    rejects: [`${P}.calibration_value`],
  },
  {
    rule: "calibration_value without type",
    zone: lineZone({ calibration_value: 10 }),
    extra: { with_calibration: true },
    rejects: [`${P}.calibration_value`],
  },
  {
    rule: "ratio missing",
    zone: lineZone({ ...calibrated, heavy_commercial_ratio: undefined }),
    extra: { with_calibration: true },
    rejects: [`${P}.heavy_commercial_ratio`],
  },
  {
    rule: "ratio above 1",
    zone: lineZone({ ...calibrated, medium_commercial_ratio: 1.2 }),
    extra: { with_calibration: true },
    rejects: [`${P}.medium_commercial_ratio`],
  },
  {
    rule: "ratios sum within 0.001",
    zone: lineZone({ ...calibrated, personal_traffic_ratio: 0.9605 }),
    extra: { with_calibration: true },
  },
  {
    rule: "ratios sum off",
    zone: lineZone({ ...calibrated, personal_traffic_ratio: 0.9 }),
    extra: { with_calibration: true },
    rejects: [`${P}.personal_traffic_ratio`],
  },
  {
    rule: "pedestrian calibration",
    zone: lineZone({ has_pedestrian_calibration: true, pedestrian_calibration_value: 999_999 }),
    extra: { with_calibration: true },
  },
  {
    rule: "pedestrian value 1,000,000",
    zone: lineZone({ has_pedestrian_calibration: true, pedestrian_calibration_value: 1_000_000 }),
    extra: { with_calibration: true },
    rejects: [`${P}.pedestrian_calibration_value`],
  },
  {
    rule: "pedestrian value required",
    zone: lineZone({ has_pedestrian_calibration: true }),
    extra: { with_calibration: true },
    rejects: [`${P}.pedestrian_calibration_value`],
  },
  {
    rule: "pedestrian value without flag",
    zone: lineZone({ pedestrian_calibration_value: 5 }),
    extra: { with_calibration: true },
    rejects: [`${P}.pedestrian_calibration_value`],
  },
  {
    rule: "has_pedestrian_calibration not boolean",
    zone: lineZone({ has_pedestrian_calibration: "yes" }),
    extra: { with_calibration: true },
    rejects: [`${P}.has_pedestrian_calibration`],
  },
  {
    rule: "bike calibration",
    zone: lineZone({ has_bike_calibration: true, bike_calibration_value: 10_000 }),
    extra: { with_calibration: true },
  },
  {
    rule: "bike value 10,001",
    zone: lineZone({ has_bike_calibration: true, bike_calibration_value: 10_001 }),
    extra: { with_calibration: true },
    rejects: [`${P}.bike_calibration_value`],
  },
  {
    rule: "bike value required",
    zone: lineZone({ has_bike_calibration: true }),
    extra: { with_calibration: true },
    rejects: [`${P}.bike_calibration_value`],
  },
  {
    rule: "MultiLineString",
    zone: {
      ...lineZone(),
      geometry: {
        type: "MultiLineString",
        coordinates: [
          [
            [1, 2],
            [1.1, 2],
          ],
        ],
      },
    },
  },
  { rule: "line of 1 position", zone: lineZone({}, [[1, 2]]), rejects: ["zones.features[0].geometry"] },
  {
    rule: "longitude 181",
    zone: lineZone({}, [
      [181, 2],
      [1, 2],
    ]),
    rejects: ["zones.features[0].geometry"],
  },
  {
    rule: "latitude -91",
    zone: lineZone({}, [
      [1, -91],
      [1, 2],
    ]),
    rejects: ["zones.features[0].geometry"],
  },
  {
    rule: "non-numeric position",
    zone: lineZone({}, [
      ["1", 2],
      [1, 2],
    ]),
    rejects: ["zones.features[0].geometry"],
  },
  {
    rule: "open ring",
    zone: { ...polygonZone(), geometry: { type: "Polygon", coordinates: [ring(1, 2).slice(0, 4)] } },
    rejects: ["zones.features[0].geometry"],
  },
  {
    rule: "ring of 3 positions",
    zone: {
      ...polygonZone(),
      geometry: {
        type: "Polygon",
        coordinates: [
          [
            [1, 2],
            [2, 2],
            [1, 2],
          ],
        ],
      },
    },
    rejects: ["zones.features[0].geometry"],
  },
  {
    rule: "Point geometry",
    zone: { ...polygonZone(), geometry: { type: "Point", coordinates: [1, 2] } },
    rejects: ["zones.features[0].geometry"],
  },
  {
    rule: "geometry missing",
    zone: { ...polygonZone(), geometry: null },
    rejects: ["zones.features[0].geometry"],
  },
  {
    rule: "properties missing",
    zone: { type: "Feature", geometry: ring(1, 2) },
    rejects: ["zones.features[0].geometry", `${P}`],
  },
  { rule: "set geom_type agrees", zone: lineZone(), extra: { geom_type: "Line" } },
  {
    rule: "set geom_type disagrees",
    zone: lineZone(),
    extra: { geom_type: "polygon" },
    rejects: ["zones.features[0].geometry.type"],
  },
  { rule: "set geom_type unknown", zone: lineZone(), extra: { geom_type: "lines" }, rejects: ["geom_type"] },
  { rule: "zone_set_name of 50", zone: polygonZone(), extra: { zone_set_name: "n".repeat(50) } },
  {
    rule: "zone_set_name of 51",
    zone: polygonZone(),
    extra: { zone_set_name: "n".repeat(51) },
    rejects: ["zone_set_name"],
  },
  {
    rule: "zone_set_name blank",
    zone: polygonZone(),
    extra: { zone_set_name: " " },
    rejects: ["zone_set_name"],
  },
  {
    rule: "with_calibration not boolean",
    zone: polygonZone(),
    extra: { with_calibration: "yes" },
    rejects: ["with_calibration"],
  },
];

describe("validateZoneSetRequest: one rule at a time", async () => {
  for (const c of cases) {
    it(`${c.rejects ? "rejects" : "accepts"}: ${c.rule}`, async () => {
      const body = request([c.zone], c.extra);
      if (!c.rejects) {
        assert.equal((await validate(body)).featureCollection.features.length, 1);
        return;
      }
      assert.deepEqual(
        (await issuesOf(async () => await validate(body))).map((i) => i.field),
        c.rejects,
      );
    });
  }
});

describe("validateZoneSetRequest: the set", async () => {
  it("names the zone by index and name in messages", async () => {
    const issues = await issuesOf(
      async () =>
        await validate(
          request([
            polygonZone({ name: "A" }),
            polygonZone({ name: "B" }),
            polygonZone({ name: "Main St", direction: 400, is_pass: 1 }),
          ]),
        ),
    );
    assert.deepEqual(issues, [
      {
        field: "zones.features[2].properties.direction",
        message: 'zone "Main St" (#2): direction must be an integer 0..359',
      },
    ]);
  });

  it("requires unique names (case-insensitive) and unique ids", async () => {
    const issues = await issuesOf(
      async () =>
        await validate(
          request([
            polygonZone({ name: "Gate", id: 4 }),
            polygonZone({ name: " GATE ", id: 4 }),
            polygonZone({ name: "Other", id: 5 }),
          ]),
        ),
    );
    assert.deepEqual(
      issues.map((i) => i.field),
      ["zones.features[1].properties.name", "zones.features[1].properties.id"],
    );
    assert.match(issues[0].message, /already used by zone #0/);
  });

  it("collects the problems of all zones", async () => {
    const issues = await issuesOf(
      async () => await validate(request([polygonZone({ id: -1 }), lineZone({ is_pass: 0, name: "L" })])),
    );
    assert.deepEqual(
      issues.map((i) => i.field),
      [
        "zones.features[0].properties.id",
        "zones.features[1].geometry.type",
        "zones.features[1].properties.is_pass",
      ],
    );
  });

  it("rejects mixing polygon and line zones in one set", async () => {
    const issues = await issuesOf(
      async () => await validate(request([lineZone({ name: "L" }), polygonZone({ name: "P" })])),
    );
    assert.deepEqual(
      issues.map((i) => i.field),
      ["zones.features[1].geometry.type"],
    );
  });

  it("normalises Polygon to MultiPolygon and fills defaults", async () => {
    const set = await validate(
      request([polygonZone({ name: " Centre ", id: 3, extra_attribute: "dropped" })]),
    );
    const [feature] = set.featureCollection.features;
    assert.equal(set.geomType, "polygon");
    assert.equal(set.name, null);
    assert.deepEqual(feature.geometry, { type: "MultiPolygon", coordinates: [[ring(11.5, 48.1)]] });
    assert.deepEqual(feature.properties, {
      name: "Centre",
      id: 3,
      is_pass: 0,
      direction: null,
      is_bidi: 0,
      geom_type: "polygon",
    });
  });

  it("makes line zones pass-through and keeps their optional properties, canonically spelt", async () => {
    const set = await validate(
      request(
        [lineZone({ road_type: "ramp", direction: 45, is_bidi: 1, ...calibrated, calibration_type: "adt" })],
        {
          with_calibration: true,
          zone_set_name: " Lines ",
        },
      ),
    );
    assert.equal(set.geomType, "line");
    assert.equal(set.name, "Lines");
    assert.equal(set.withCalibration, true);
    assert.deepEqual(set.featureCollection.features[0].properties, {
      name: "Road",
      id: null,
      is_pass: 1,
      direction: 45,
      is_bidi: 1,
      geom_type: "line",
      road_type: "Ramp",
      calibration_type: "ADT",
      calibration_value: 12000,
      personal_traffic_ratio: 0.96,
      medium_commercial_ratio: 0.02,
      heavy_commercial_ratio: 0.02,
    });
  });

  it("accepts a bare array of features, with paths relative to it", async () => {
    const body = {
      zones: [polygonZone({ name: "A" }), polygonZone({ name: "" })],
      insight_login_email: org.email,
    };
    assert.deepEqual(
      (await issuesOf(async () => await validate(body))).map((i) => i.field),
      ["zones[1].properties.name"],
    );
    body.zones.pop();
    assert.equal((await validate(body)).featureCollection.features.length, 1);
  });

  it("rejects an empty set, a non-collection and a body without zones", async () => {
    assert.deepEqual(
      (await issuesOf(async () => await validate(request([])))).map((i) => i.field),
      ["zones.features"],
    );
    assert.deepEqual(
      (
        await issuesOf(
          async () => await validate({ zones: { type: "Feature" }, insight_login_email: org.email }),
        )
      ).map((i) => i.field),
      ["zones"],
    );
    assert.deepEqual(
      (await issuesOf(async () => await validate({ insight_login_email: org.email }))).map((i) => i.field),
      ["zones"],
    );
  });

  it(`allows at most ${MAX_ZONES_PER_SET} zones`, async () => {
    const many = Array.from({ length: MAX_ZONES_PER_SET + 1 }, (_, i) => polygonZone({ name: `z${i}` }));
    assert.deepEqual(
      (await issuesOf(async () => await validate(request(many)))).map((i) => i.field),
      ["zones.features"],
    );
    assert.equal(
      (await validate(request(many.slice(1)))).featureCollection.features.length,
      MAX_ZONES_PER_SET,
    );
  });

  it("reports at most 100 problems and counts the rest", async () => {
    const faulty = Array.from({ length: 150 }, (_, i) => polygonZone({ name: `z${i}`, id: 0 }));
    const issues = await issuesOf(async () => await validate(request(faulty)));
    assert.equal(issues.length, 101);
    assert.deepEqual(issues[100], { field: "zones", message: "and 50 more problems" });
  });

  it("requires a login e-mail of the key's organization", async () => {
    assert.deepEqual(
      (await issuesOf(async () => await validate({ zones: [polygonZone()] }))).map((i) => i.field),
      ["insight_login_email"],
    );
    await assert.rejects(
      async () => await validate({ zones: [polygonZone()], insight_login_email: other.email }),
      (e: unknown) => e instanceof DomainError && e.httpStatus === 403 && e.code === "not_a_member",
    );
  });
});

function segment(
  wayId: number,
  index: number,
  coords: LonLat[],
  nodes: [number, number],
  name: string | null,
): Segment {
  return {
    id: segmentIdOf(wayId, index),
    wayId,
    index,
    roadClass: "secondary",
    highway: "secondary",
    roadType: "Secondary",
    oneway: false,
    speedKph: 50,
    name,
    lengthM: 100,
    fromNode: nodes[0],
    toNode: nodes[1],
    access: 7,
    coords,
  };
}

describe("validateZoneSetRequest: osm_ids", async () => {
  // Way 100: two connected pieces; way 200: two pieces with a gap; 300 and 400 share a name.
  await store.network.replaceCountry(
    { country: "xx", source: "test", segmentCount: 6, importedAt: "2026-01-01" },
    [
      segment(
        100,
        1,
        [
          [1.001, 2],
          [1.002, 2],
        ],
        [2, 3],
        "High Street",
      ),
      segment(
        100,
        0,
        [
          [1, 2],
          [1.001, 2],
        ],
        [1, 2],
        "High Street",
      ),
      segment(
        200,
        0,
        [
          [3, 4],
          [3.001, 4],
        ],
        [10, 11],
        null,
      ),
      segment(
        200,
        1,
        [
          [3.005, 4],
          [3.006, 4],
        ],
        [12, 13],
        null,
      ),
      segment(
        300,
        0,
        [
          [5, 6],
          [5.001, 6],
        ],
        [20, 21],
        "Ring",
      ),
      segment(
        400,
        0,
        [
          [5.001, 6],
          [5.002, 6],
        ],
        [21, 22],
        "Ring",
      ),
    ],
  );
  const osm = async (osm_ids: unknown, extra: Record<string, unknown> = {}) =>
    await validate({ osm_ids, insight_login_email: org.email, ...extra });

  it("turns each way into one line zone with the way's joined geometry", async () => {
    const set = await osm([100, 200, 300, "400"]);
    assert.equal(set.geomType, "line");
    const [high, unnamed, ring1, ring2] = set.featureCollection.features;
    assert.deepEqual(high.geometry, {
      type: "LineString",
      coordinates: [
        [1, 2],
        [1.001, 2],
        [1.002, 2],
      ],
    });
    assert.deepEqual(high.properties, {
      name: "High Street",
      id: 100,
      is_pass: 1,
      direction: null,
      is_bidi: 0,
      geom_type: "line",
      osm_id: 100,
      road_type: "Secondary",
    });
    assert.deepEqual(unnamed.geometry, {
      type: "MultiLineString",
      coordinates: [
        [
          [3, 4],
          [3.001, 4],
        ],
        [
          [3.005, 4],
          [3.006, 4],
        ],
      ],
    });
    assert.equal(unnamed.properties.name, "way 200");
    assert.deepEqual([ring1.properties.name, ring2.properties.name], ["Ring", "Ring (400)"]);
  });

  it("drops repeated ids", async () => {
    assert.equal((await osm([100, "100", 100])).featureCollection.features.length, 1);
  });

  it("lists every unknown id", async () => {
    const issues = await issuesOf(async () => await osm([100, 999, 998]));
    assert.deepEqual(issues, [
      { field: "osm_ids", message: "unknown OSM way ids (not in any imported network): 999, 998" },
    ]);
  });

  it("rejects malformed ids, an empty list, and zones together with osm_ids", async () => {
    assert.deepEqual(
      (await issuesOf(async () => await osm([100, -3, 1.5]))).map((i) => i.field),
      ["osm_ids[1]", "osm_ids[2]"],
    );
    assert.deepEqual(
      (await issuesOf(async () => await osm([]))).map((i) => i.field),
      ["osm_ids"],
    );
    assert.deepEqual(
      (await issuesOf(async () => await osm([100], { zones: [lineZone()] }))).map((i) => i.field),
      ["osm_ids"],
    );
  });

  it("finds ways across imported countries through the registry", async () => {
    assert.equal((await networks.findWay(300, ["yy", "xx"]))?.country, "xx");
    assert.equal(await networks.findWay(999, ["xx"]), null);
  });
});

describe("geohash split", () => {
  // Two clusters far apart, interleaved in input order.
  const munich = (i: number) =>
    polygonZone({ name: `m${i}` }, 11.5 + i * 0.001, 48.1) as unknown as ZoneFeature;
  const paris = (i: number) =>
    polygonZone({ name: `p${i}` }, 2.3 + i * 0.001, 48.8) as unknown as ZoneFeature;
  const zones = [0, 1, 2].flatMap((i) => [munich(i), paris(i)]);
  const names = (chunk: ZoneFeature[]) => chunk.map((z) => z.properties.name).sort();

  it("keeps a set that fits whole and in order", () => {
    assert.deepEqual(splitByGeohash(zones, 6), [zones]);
  });

  it("groups neighbours together in balanced chunks", () => {
    const chunks = splitByGeohash(zones, 3);
    assert.deepEqual(chunks.map(names), [
      ["p0", "p1", "p2"],
      ["m0", "m1", "m2"],
    ]);
    assert.deepEqual(
      splitByGeohash(zones, 4).map((c) => c.length),
      [3, 3],
    );
    assert.deepEqual(
      splitByGeohash(zones, 2).map((c) => c.length),
      [2, 2, 2],
    );
  });

  it("is deterministic whatever the input order", () => {
    const reversed = [...zones].reverse();
    assert.deepEqual(splitByGeohash(reversed, 3).map(names), splitByGeohash(zones, 3).map(names));
  });

  it("names the parts NAME_1, NAME_2 and checks the name length", () => {
    const set: NormalisedZoneSet = {
      name: "Big",
      geomType: "polygon",
      withCalibration: false,
      featureCollection: { type: "FeatureCollection", features: zones },
    };
    const parts = planZoneUpload(set, 4);
    assert.deepEqual(
      parts.map((p) => [p.name, p.featureCollection.features.length]),
      [
        ["Big_1", 3],
        ["Big_2", 3],
      ],
    );
    assert.deepEqual(planZoneUpload(set), [set]);
    assert.throws(() => planZoneUpload({ ...set, name: "n".repeat(49) }, 4), /choose a shorter name/);
    assert.throws(() => planZoneUpload(set, 0), /max zones/);
  });
});
