import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { JobRunner } from "../../src/jobs/runner.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import { segmentIdOf } from "../../src/engine/network/types.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import { gridCellOf } from "../../src/engine/analysis/location-grid.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { at, seg } from "../helpers/network.js";
import { boxZone, seedStreetQuarters } from "../helpers/street-scenario.js";
import { startQuickRunner } from "../helpers/analyses.js";
import { tempDir } from "../helpers/temp-dir.js";
import { finished } from "../helpers/catalogue-scenario.js";

/**
 * Home and work locations of a Zone_Activity_Analysis, counted by hand: a 1.5 km street in Monaco
 * (three 500 m segments, UTC+1 in January), zones West (x -20..100) and East (x 1400..1520), and the
 * week of 6-12 January 2025 with places at x = 10 (W), 750 (M), 1000 (X) and 1490 (E):
 *
 * - 6 commuters live at W and work at E: Monday to Friday W→E at 08:00, E→W at 17:00.
 * - 3 reverse commuters live at E and work at W: the same hours the other way.
 * - 5 shoppers live at E: Saturday and Sunday E→W at 10:00, W→E at 12:00.
 * - 5 neighbours live at M: Saturday M→W and back, Sunday M→X and back (10:00, 12:00).
 * - 2 one-off devices: a single W→E trip on Wednesday, so no home (one night) and left out.
 *
 * Every trip takes 15 minutes. Homes: the first trip of each day leaves from home (commuters 5
 * nights, the others 2); work: commuters stay 08:15-17:00 on weekdays, 1.48 km from home.
 */
const STREET = [0, 1, 2].map((i) =>
  seg(1, i, i + 1, i + 2, [
    [i * 500, 0],
    [(i + 1) * 500, 0],
  ]),
);
const W = 10;
const M = 750;
const X = 1000;
const E = 1490;

function trip(device: string, localIso: string, from: number, to: number): MatchedTrip {
  const startT = Date.parse(`${localIso}+01:00`);
  const endT = startT + 15 * 60_000;
  const east = to > from;
  const order = east ? [0, 1, 2] : [2, 1, 0];
  const step = (endT - startT) / 3;
  return {
    deviceId: device,
    vehicleClass: "personal",
    source: "lbs",
    origin: at(from, 0),
    destination: at(to, 0),
    startT,
    endT,
    lengthM: Math.abs(to - from),
    path: order.map((i, k) => ({
      segmentId: segmentIdOf(1, i),
      forward: east,
      enterT: startT + k * step,
      exitT: startT + (k + 1) * step,
    })),
  };
}

function weekTrips(): MatchedTrip[] {
  const trips: MatchedTrip[] = [];
  const weekdays = ["06", "07", "08", "09", "10"];
  const commute = (device: string, home: number, work: number) =>
    weekdays.forEach((d) =>
      trips.push(
        trip(device, `2025-01-${d}T08:00:00`, home, work),
        trip(device, `2025-01-${d}T17:00:00`, work, home),
      ),
    );
  for (let i = 0; i < 6; i++) commute(`commuter${i}`, W, E);
  for (let i = 0; i < 3; i++) commute(`reverse${i}`, E, W);
  for (let i = 0; i < 5; i++)
    for (const d of ["11", "12"])
      trips.push(
        trip(`shopper${i}`, `2025-01-${d}T10:00:00`, E, W),
        trip(`shopper${i}`, `2025-01-${d}T12:00:00`, W, E),
      );
  for (let i = 0; i < 5; i++)
    trips.push(
      trip(`neighbour${i}`, "2025-01-11T10:00:00", M, W),
      trip(`neighbour${i}`, "2025-01-11T12:00:00", W, M),
      trip(`neighbour${i}`, "2025-01-12T10:00:00", M, X),
      trip(`neighbour${i}`, "2025-01-12T12:00:00", X, M),
    );
  for (let i = 0; i < 2; i++) trips.push(trip(`oneoff${i}`, "2025-01-08T09:00:00", W, E));
  return trips.sort((a, b) => a.startT - b.startT);
}

describe("Zone_Activity_Analysis home and work locations over HTTP (hand-counted week)", () => {
  let ctx: TestContext;
  let runner: JobRunner;

  before(async () => {
    const store = new SqliteStore(join(tempDir("streetflow-hwl-"), "streetflow.db"));
    await store.network.replaceCountry(
      { country: "mc", source: "test", segmentCount: 3, importedAt: "" },
      STREET,
    );
    ctx = await makeTestApp(store);
    await seedStreetQuarters(store, 700, 1600);
    await createZoneSet(
      {
        insight_login_email: ctx.orgA.email,
        zone_set_name: "Ends",
        zones: {
          type: "FeatureCollection",
          features: [boxZone("West", 1, -20, 100), boxZone("East", 2, 1400, 1520)],
        },
      },
      { store, networks: ctx.networks, orgId: ctx.orgA.orgId },
    );
    await store.trips.appendTrips("mc", weekTrips());
    runner = await startQuickRunner(
      store,
      new URL("../../src/app/analyses/compute.ts", import.meta.url).href,
    );
  });
  after(async () => {
    await runner.stop();
    await ctx.app.close();
    await ctx.store.close();
  });

  const create = (extra: Record<string, unknown>) =>
    ctx.app.inject({
      method: "POST",
      url: `/api/v2/analyses?key=${ctx.orgA.key}`,
      payload: {
        insight_login_email: ctx.orgA.email,
        analysis_type: "Zone_Activity_Analysis",
        travel_mode_type: "All_Vehicles",
        oz_sets: [{ name: "Ends" }],
        date_ranges: [{ start_date: "01/06/2025", end_date: "01/12/2025" }],
        day_types: "Average Day|17",
        day_parts: "All Day|0023",
        enable_home_work_locations: true,
        ...extra,
      },
    });
  const download = async (uuid: string, metric: string) =>
    (
      await ctx.app.inject({
        method: "GET",
        url: `/api/v2/analyses/download/uuid/${uuid}/${metric}?key=${ctx.orgA.key}`,
      })
    ).body.split("\n");
  const run = async (extra: Record<string, unknown>) => {
    const res = await create(extra);
    assert.equal(res.statusCode, 201, res.body);
    const done = await finished(ctx, res.json().uuid);
    assert.equal(done.status, "Data Available");
    return { uuid: res.json().uuid as string, metrics: done.metrics };
  };

  const cell = (x: number) => {
    const c = gridCellOf(at(x, 0));
    return [c.id, ...c.bounds].join(",");
  };
  const zone = (id: number, name: string) =>
    `All Vehicles,${id},${name},no,N/A,0: Average Day (M-Su),0: All Day (12am-12am)`;
  const west = zone(1, "West");
  const east = zone(2, "East");
  const hidden = "suppressed,,,,";

  it("splits each zone's visitors, residents and workers by the grid cell they live and work in", async () => {
    const { uuid, metrics } = await run({
      hwl_enable_visitor: true,
      hwl_enable_resident: true,
      hwl_enable_worker: true,
    });
    assert.deepEqual(metrics, [
      "za_all",
      "za_pers",
      "za_comm",
      "home_grid_all",
      "work_grid_all",
      "sample_size",
    ]);
    // West. Visitors: 5 shoppers (20 trips, home E) and 5 neighbours (10 trips, home M): 2/3 and 1/3.
    // Residents: the 6 commuters. Workers: the 3 reverse commuters, too few to show their cell.
    // East. Residents: 5 shoppers and 3 reverse commuters, all at E. Workers: the 6 commuters.
    // Nobody visits East: the one-off devices have no home and are left out.
    assert.deepEqual(await download(uuid, "home_grid_all"), [
      "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part," +
        "traveler_type,grid_id,grid_west,grid_south,grid_east,grid_north,trip_share",
      `${west},Visitor,${cell(E)},0.667`,
      `${west},Visitor,${cell(M)},0.333`,
      `${west},Resident,${cell(W)},1`,
      `${west},Worker,${hidden},1`,
      `${east},Resident,${cell(E)},1`,
      `${east},Worker,${cell(W)},1`,
      "",
    ]);
    // Work places: only commuters have one. West's residents work at E; its workers (3) are hidden;
    // East's residents with a work place are the 3 reverse commuters (hidden); its workers work at E.
    assert.deepEqual((await download(uuid, "work_grid_all")).slice(1), [
      `${west},Resident,${cell(E)},1`,
      `${west},Worker,${hidden},1`,
      `${east},Resident,${hidden},1`,
      `${east},Worker,${cell(E)},1`,
      "",
    ]);
  });

  it("reports over a preset geography and only the kinds asked for", async () => {
    const { uuid, metrics } = await run({ hwl_enable_resident: true, geography_type: "ADMIN_10" });
    assert.deepEqual(metrics, [
      "za_all",
      "za_pers",
      "za_comm",
      "home_admin_10_all",
      "work_admin_10_all",
      "sample_size",
    ]);
    assert.deepEqual(await download(uuid, "home_admin_10_all"), [
      "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part," +
        "traveler_type,area_id,area_name,trip_share",
      `${west},Resident,501,West Quarter,1`,
      `${east},Resident,502,East Quarter,1`,
      "",
    ]);
    const detail = await ctx.app.inject({
      method: "GET",
      url: `/api/v2/analyses/${uuid}?key=${ctx.orgA.key}`,
    });
    assert.equal(detail.json().analysis.geography_type, "admin_10");
  });

  it("adds every trip- and traveler-attribute variant beside the home and work locations", async () => {
    const { uuid, metrics } = await run({
      hwl_enable_resident: true,
      trip_attributes: true,
      traveler_attributes: true,
      unit_of_measurement: "km",
      trip_duration_bins: "0-10,10-20,20+",
      trip_length_bins: "0-1,1+",
      trip_speed_bins: "0-5,5+",
    });
    assert.deepEqual(metrics, [
      "za_all",
      "za_pers",
      "za_comm",
      "za_trip_duration",
      "za_trip_length",
      "za_trip_speed",
      "za_trip_circuity",
      "za_trip_purpose",
      "za_income",
      "home_grid_all",
      "work_grid_all",
      "sample_size",
    ]);
    const identity = "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part";
    // West meets 122 trips: commuters 60, reverse commuters 30, shoppers 20 and the one-off 2, all W↔E
    // (1.48 km in 15 min, 5.9 km/h), and the neighbours' 10 Saturday trips M↔W (0.74 km, 3.0 km/h).
    // East meets the 112 W↔E trips (not the neighbours'). Every trip takes 15 minutes.
    assert.deepEqual(await download(uuid, "za_trip_length"), [
      `${identity},trip_length_km_0_1,trip_length_km_1_plus`,
      `${west},0.082,0.918`,
      `${east},0,1`,
      "",
    ]);
    assert.deepEqual((await download(uuid, "za_trip_speed")).slice(1), [
      `${west},0.082,0.918`,
      `${east},0,1`,
      "",
    ]);
    assert.deepEqual((await download(uuid, "za_trip_duration")).slice(1), [
      `${west},0,1,0`,
      `${east},0,1,0`,
      "",
    ]);
    // Paths as straight as the street: circuity 1.
    assert.deepEqual((await download(uuid, "za_trip_circuity")).slice(1), [
      `${west},1,0,0,0,0,0`,
      `${east},1,0,0,0,0,0`,
      "",
    ]);
    // The hand-made trips carry no purpose or income band: all unknown.
    assert.deepEqual(await download(uuid, "za_trip_purpose"), [
      `${identity},purpose_hbw,purpose_hbo,purpose_nhbw,purpose_wbo,purpose_unknown`,
      `${west},0,0,0,0,1`,
      `${east},0,0,0,0,1`,
      "",
    ]);
    assert.deepEqual((await download(uuid, "za_income")).slice(1), [
      `${west},0,0,0,0,0,1`,
      `${east},0,0,0,0,0,1`,
      "",
    ]);
    // The home and work locations are those of the first case, residents only.
    assert.deepEqual((await download(uuid, "home_grid_all")).slice(1), [
      `${west},Resident,${cell(W)},1`,
      `${east},Resident,${cell(E)},1`,
      "",
    ]);
  });

  it("refuses home and work locations without a traveller kind, for trucks, and an unknown geography", async () => {
    const none = await create({});
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().error.field, "enable_home_work_locations");
    const truck = await create({ travel_mode_type: "Truck", hwl_enable_worker: true });
    assert.equal(truck.statusCode, 400);
    assert.equal(truck.json().error.field, "enable_home_work_locations");
    const unknown = await create({ hwl_enable_worker: true, geography_type: "taz" });
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().error.field, "geography_type");
    assert.match(unknown.json().error.message, /admin_10/);
  });
});
