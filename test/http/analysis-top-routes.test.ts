import { describe, it } from "node:test";
import assert from "node:assert/strict";
import shp from "shpjs";
import type { FeatureCollection, LineString } from "geojson";
import { segmentIdOf } from "../../src/engine/network/types.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import {
  analysisApp,
  analysisSuite,
  finished,
  STREET_WEEK,
  zoneSetOf,
} from "../helpers/catalogue-scenario.js";
import { at, seg } from "../helpers/network.js";
import { boxZone } from "../helpers/street-scenario.js";

/**
 * A street from x 0 to 300 m (three 100 m pieces M0 M1 M2, way 1) with a northern loop N (way 2, 200 m:
 * up 50 m at x 100, along, down at x 200) beside M1, a short spur E (way 3, 18 m south from x 300) and a
 * long one F (way 4, 100 m east from x 300). Zones West (x −20..50) and East (x 250..420).
 * Monday 6 January 2025, 12 trips of 12 devices (each stands for 10,000 / 12 = 833.3 trips):
 * - A:  M0 M1 M2, 4 trips of 10 min (300 m);
 * - A': M0 M1 M2 E, 2 trips of 12 min (318 m): shares 300 m = 94 % of its length with A, so it is A;
 * - B:  M0 N M2, 3 trips of 8 min (400 m): shares 200 m = 50 % of its length with A, a route of its own;
 * - C:  M0 M1 M2 F, 1 trip of 15 min (400 m): shares 300 m = 75 % with A (< 80 %), a route of its own;
 * - W:  M2 M1 M0 westbound, 2 trips of 6 min: from East to West.
 */
const M = [0, 1, 2].map((i) => segmentIdOf(1, i));
const N = segmentIdOf(2, 0);
const E = segmentIdOf(3, 0);
const F = segmentIdOf(4, 0);
const SEGMENTS = [
  ...[0, 1, 2].map((i) =>
    seg(1, i, i + 1, i + 2, [
      [i * 100, 0],
      [(i + 1) * 100, 0],
    ]),
  ),
  seg(2, 0, 2, 3, [
    [100, 0],
    [100, 50],
    [200, 50],
    [200, 0],
  ]),
  seg(3, 0, 4, 5, [
    [300, 0],
    [300, -18],
  ]),
  seg(4, 0, 4, 6, [
    [300, 0],
    [400, 0],
  ]),
];

let device = 0;
function trip(path: number[], minutes: number, east = true): MatchedTrip {
  const startT = Date.parse("2025-01-06T07:00:00+01:00") + device * 60_000;
  const endT = startT + minutes * 60_000;
  const step = (endT - startT) / path.length;
  return {
    deviceId: `d${device++}`,
    vehicleClass: "personal",
    source: "lbs",
    origin: east ? at(10, 0) : at(290, 0),
    destination: east ? at(290, 0) : at(10, 0),
    startT,
    endT,
    lengthM: 300,
    path: path.map((segmentId, k) => ({
      segmentId,
      forward: east,
      enterT: startT + k * step,
      exitT: startT + (k + 1) * step,
    })),
  };
}

const times = (n: number, make: () => MatchedTrip) => Array.from({ length: n }, make);
const TRIPS = [
  ...times(4, () => trip([M[0], M[1], M[2]], 10)),
  ...times(2, () => trip([M[0], M[1], M[2], E], 12)),
  ...times(3, () => trip([M[0], N, M[2]], 8)),
  trip([M[0], M[1], M[2], F], 15),
  ...times(2, () => trip([M[2], M[1], M[0]], 6, false)),
];

describe("Top_Routes_OD and Top_Routes_ZA over HTTP: the most used routes, overlapping paths merged", () => {
  const { ctx, base, create, get } = analysisSuite(
    async () =>
      await analysisApp("streetflow-top-routes-", SEGMENTS, async (app) => {
        await zoneSetOf(app, "Ends", [boxZone("West", 1, -20, 50), boxZone("East", 2, 250, 420)]);
        await app.store.trips.appendTrips("mc", TRIPS);
      }),
    {
      ...STREET_WEEK,
      analysis_type: "Top_Routes_OD",
      oz_sets: [{ name: "Ends" }],
      dz_sets: [{ name: "Ends" }],
      output_type: "trip_counts",
      unit_of_measurement: "km",
    },
  );
  const run = async (body: Record<string, unknown>) => {
    const res = await create(body);
    assert.equal(res.statusCode, 201, res.body);
    const { uuid } = res.json();
    const done = await finished(ctx(), uuid);
    assert.equal(done.status, "Data Available");
    return { uuid: uuid as string, metrics: done.metrics };
  };
  const day = "0: Average Day (M-Su),0: All Day (12am-12am)";

  it("ranks each pair's routes: overlapping ≥ 80 % merged, share of the pair's trips, length, time", async () => {
    const { uuid, metrics } = await run(base({ analysis_name: "Routes" }));
    assert.deepEqual(metrics, ["tr_od_all", "tr_od_pers", "tr_od_comm", "sample_size"]);
    // West → East: 10 trips (8,333); A with A' 6 (5,000, 60 %, (4 × 10 + 2 × 12) / 6 = 10.7 min, its
    // representative the 300 m of A), B 3 (2,500, 30 %, 0.4 km, 8 min), C 1 (833, 10 %, 0.4 km, 15 min).
    // East → West: the 2 westbound trips, route 4.
    assert.deepEqual((await get(uuid, "tr_od_all")).body.split("\n"), [
      "device_type,origin_zone_id,origin_zone_name,destination_zone_id,destination_zone_name,day_type,day_part," +
        "route_rank,route_id,route_traffic,route_share,pair_traffic,route_length,avg_trip_duration,sample_size",
      `All Vehicles,1,West,2,East,${day},1,1,5000,60,8333,0.3,10.7,6`,
      `All Vehicles,1,West,2,East,${day},2,2,2500,30,8333,0.4,8,3`,
      `All Vehicles,1,West,2,East,${day},3,3,833,10,8333,0.4,15,1`,
      `All Vehicles,2,East,1,West,${day},1,4,1667,100,1667,0.3,6,2`,
      "",
    ]);
  });

  it("keeps top_routes_count routes and averages per day with index output", async () => {
    const { uuid } = await run(base({ analysis_name: "Top two", top_routes_count: 2, output_type: "index" }));
    // Per day of the week's 7: 5,000 / 7 = 714, 2,500 / 7 = 357, the pair 8,333 / 7 = 1,190. Routes are
    // numbered as the rows show them: C is left out, so the westbound route is number 3.
    const rows = (await get(uuid, "tr_od_all")).body.split("\n").slice(1, -1);
    assert.deepEqual(
      rows.map((r) => r.split(",").slice(7, 12).join(",")),
      ["1,1,714,60,1190", "2,2,357,30,1190", "1,3,238,100,238"],
    );
    // The analysis detail echoes the count it keeps.
    const detail = await ctx().app.inject({
      method: "GET",
      url: `/api/v2/analyses/${uuid}?key=${ctx().orgA.key}`,
    });
    assert.equal(detail.json().analysis.top_routes_count, 2);
  });

  it("serves the routes as a line shapefile, one record per route row, drawn along its path", async () => {
    const { uuid } = await run(base({ analysis_name: "Routes shapefile" }));
    const status = await ctx().app.inject({
      method: "POST",
      url: `/api/v2/analyses/status?key=${ctx().orgA.key}`,
      payload: { analyses: [{ uuid }] },
    });
    assert.ok(status.json().analyses[0].shapefiles.includes("top_routes"));
    const res = await get(uuid, "top_routes");
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "application/zip");
    const layer = (await shp(res.rawPayload)) as FeatureCollection<LineString>;
    const props = layer.features.map((f) => {
      const p = f.properties!;
      return [p.route_id, p.origin_nm, p.dest_id, p.day_part, p.rank, p.share, p.length, p.time_min, p.trips];
    });
    const allDay = "0: All Day (12am-12am)";
    assert.deepEqual(props, [
      [1, "West", 2, allDay, 1, 60, 0.3, 10.7, 6],
      [2, "West", 2, allDay, 2, 30, 0.4, 8, 3],
      [3, "West", 2, allDay, 3, 10, 0.4, 15, 1],
      [4, "East", 1, allDay, 1, 100, 0.3, 6, 2],
    ]);
    const xy = (c: number[]) => c.map((v) => Math.round(v * 1e5));
    // Route 2 runs M0, the loop N (4 points) and M2: 6 points, west to east; route 4 runs east to west.
    assert.equal(layer.features[1].geometry.coordinates.length, 6);
    assert.deepEqual(xy(layer.features[1].geometry.coordinates[2]), xy(at(100, 50)));
    assert.deepEqual(xy(layer.features[3].geometry.coordinates[0]), xy(at(300, 0)));
    assert.deepEqual(xy(layer.features[3].geometry.coordinates.at(-1)!), xy(at(0, 0)));
  });

  it("Top_Routes_ZA: the routes of every trip meeting each zone, with dz_sets accepted", async () => {
    const { uuid, metrics } = await run(
      base({ analysis_name: "Zone routes", analysis_type: "Top_Routes_ZA", dz_sets: [{ name: "Ends" }] }),
    );
    assert.deepEqual(metrics, ["tr_za_all", "tr_za_pers", "tr_za_comm", "sample_size"]);
    // Each zone meets all 12 trips (10,000): A 5,000 (50 %), B 2,500 (25 %), W 1,667 (16.7 %), C 833.
    const rows = (await get(uuid, "tr_za_all")).body.split("\n");
    assert.equal(
      rows[0],
      "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part,route_rank,route_id," +
        "route_traffic,route_share,zone_traffic,route_length,avg_trip_duration,sample_size",
    );
    const west = [
      `All Vehicles,1,West,no,N/A,${day},1,1,5000,50,10000,0.3,10.7,6`,
      `All Vehicles,1,West,no,N/A,${day},2,2,2500,25,10000,0.4,8,3`,
      `All Vehicles,1,West,no,N/A,${day},3,3,1667,16.7,10000,0.3,6,2`,
      `All Vehicles,1,West,no,N/A,${day},4,4,833,8.3,10000,0.4,15,1`,
    ];
    assert.deepEqual(rows.slice(1, 5), west);
    // East: the same routes, so the same route numbers.
    assert.deepEqual(
      rows.slice(5, -1),
      west.map((r) => r.replace("1,West,", "2,East,")),
    );
    const none = await run(
      base({ analysis_name: "Zone routes alone", analysis_type: "Top_Routes_ZA", dz_sets: [] }),
    );
    assert.deepEqual(none.metrics, ["tr_za_all", "tr_za_pers", "tr_za_comm", "sample_size"]);
  });

  it("refuses a bad top_routes_count and a missing dz_sets of Top_Routes_OD", async () => {
    for (const bad of [0, 101, 2.5, "ten"]) {
      const res = await create(base({ top_routes_count: bad }));
      assert.equal(res.statusCode, 400, String(bad));
      assert.equal(res.json().error.field, "top_routes_count");
    }
    const missing = await create(base({ dz_sets: undefined }));
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.field, "dz_sets");
    const volume = await create(base({ output_type: "volume" }));
    assert.equal(volume.statusCode, 400);
  });
});
