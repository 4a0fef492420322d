import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import type { MatchedTrip, VehicleClass } from "../../src/engine/trips/types.js";
import { computeAnalysis } from "../../src/app/analyses/compute.js";
import { at } from "../helpers/network.js";
import { createStreetEnds, streetStore, streetTrip } from "../helpers/street-scenario.js";

// Monaco (UTC+1 in January): day types and parts are sliced in local time.

const trip = (device: string, localIso: string, minutes: number, vehicleClass: VehicleClass, east: boolean) =>
  streetTrip({ device, localIso, minutes, vehicleClass, east });

describe("OD_Analysis over stored trips (hand-counted)", async () => {
  const { store, networks, ctx } = await streetStore();
  let metrics: Record<string, string>;

  before(async () => {
    await createStreetEnds(ctx);
    await createZoneSet(
      {
        insight_login_email: "p@example.org",
        zone_set_name: "Gate",
        zones: {
          type: "FeatureCollection",
          features: [
            {
              type: "Feature",
              properties: { name: "Gate", id: 3, is_pass: 1, direction: 90 },
              geometry: { type: "LineString", coordinates: [at(130, 0), at(170, 0)] },
            },
          ],
        },
      },
      ctx,
    );
    const trips: MatchedTrip[] = [];
    for (let i = 0; i < 7; i++) trips.push(trip(`car${i}`, "2025-01-06T07:00:00", 10, "personal", true));
    for (let i = 0; i < 2; i++)
      trips.push(trip(`truck${i}`, "2025-01-11T12:00:00", 20, "heavy_commercial", true));
    trips.push(trip("car0", "2025-01-07T08:30:00", 6, "personal", false));
    trips.push(trip("car9", "2025-01-20T07:00:00", 10, "personal", true)); // after the date range
    await store.trips.appendTrips("mc", trips);

    const spec = await validateAnalysisRequest(
      {
        insight_login_email: "p@example.org",
        analysis_name: "Street OD",
        analysis_type: "OD_Analysis",
        travel_mode_type: "All_Vehicles",
        output_type: "index",
        oz_sets: [{ name: "Street" }, { name: "Gate" }],
        dz_sets: [{ name: "Street" }, { name: "Gate" }],
        date_ranges: [{ start_date: "01/06/2025", end_date: "01/12/2025" }],
        day_types: "Average Day|17,Weekend|67",
        day_parts: "All Day|0023,Peak AM|0609",
        country: "mc",
      },
      ctx,
    );
    metrics = await computeAnalysis(spec, { store, networks, onProgress: () => {} });
  });

  it("produces the metrics of an all-vehicle analysis", () => {
    assert.deepEqual(Object.keys(metrics), [
      "od_all",
      "od_pers",
      "od_comm",
      "zone_od_all",
      "_review",
      "sample_size",
    ]);
  });

  it("writes od_all with the vendor's columns, labels and row order, averaged per day of each day type", () => {
    const head =
      "device_type,origin_zone_id,origin_zone_name,origin_zone_is_pass_through,origin_zone_direction," +
      "destination_zone_id,destination_zone_name,destination_zone_is_pass_through,destination_zone_direction," +
      "day_type,day_part,o_d_traffic,origin_zone_traffic,destination_zone_traffic,avg_trip_duration";
    const avg = "0: Average Day (M-Su)";
    const wkd = "1: Weekend (Sa-Su)";
    const all = "0: All Day (12am-12am)";
    const am = "1: Peak AM (6am-10am)";
    const w = "1,West,no,N/A";
    const e = "2,East,no,N/A";
    const g = "3,Gate,yes,90";
    // 9 eastbound trips over 7 days (7 cars at 07:00 Monday, 2 trucks Saturday noon); one car westbound.
    // 10 devices made trips in January: each trip stands for INDEX_PANEL / 10 = 1,000.
    const expected = [
      head,
      `All Vehicles,${w},${e},${avg},${all},1286,1286,1286,12`,
      `All Vehicles,${w},${e},${avg},${am},1000,1000,1000,10`,
      `All Vehicles,${w},${g},${avg},${all},1286,1286,1286,12`,
      `All Vehicles,${w},${g},${avg},${am},1000,1000,1000,10`,
      `All Vehicles,${e},${w},${avg},${all},143,143,143,6`,
      `All Vehicles,${e},${w},${avg},${am},143,143,143,6`,
      `All Vehicles,${g},${e},${avg},${all},1286,1286,1286,12`,
      `All Vehicles,${g},${e},${avg},${am},1000,1000,1000,10`,
      `All Vehicles,${w},${e},${wkd},${all},1000,1000,1000,20`,
      `All Vehicles,${w},${g},${wkd},${all},1000,1000,1000,20`,
      `All Vehicles,${g},${e},${wkd},${all},1000,1000,1000,20`,
      "",
    ];
    assert.equal(metrics.od_all, expected.join("\n"));
  });

  it("splits personal and commercial traffic", () => {
    const pers = metrics.od_pers.split("\n");
    assert.equal(
      pers[1],
      "Personal,1,West,no,N/A,2,East,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am),1000,1000,1000,10",
    );
    assert.ok(!metrics.od_pers.includes("Weekend"), "no personal trips at the weekend");
    const comm = metrics.od_comm.split("\n").filter((l) => l.startsWith("Commercial,1,West"));
    assert.deepEqual(comm, [
      "Commercial,1,West,no,N/A,2,East,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am),286,286,286,20",
      "Commercial,1,West,no,N/A,3,Gate,yes,90,0: Average Day (M-Su),0: All Day (12am-12am),286,286,286,20",
      "Commercial,1,West,no,N/A,2,East,no,N/A,1: Weekend (Sa-Su),0: All Day (12am-12am),1000,1000,1000,20",
      "Commercial,1,West,no,N/A,3,Gate,yes,90,1: Weekend (Sa-Su),0: All Day (12am-12am),1000,1000,1000,20",
    ]);
  });

  it("reports each zone's traffic as origin and destination", () => {
    const lines = metrics.zone_od_all.split("\n");
    assert.equal(
      lines[0],
      "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part,origin_zone_traffic,destination_zone_traffic",
    );
    assert.ok(
      lines.includes("All Vehicles,3,Gate,yes,90,0: Average Day (M-Su),0: All Day (12am-12am),1286,1286"),
    );
    assert.ok(lines.includes("All Vehicles,1,West,no,N/A,1: Weekend (Sa-Su),1: Peak AM (6am-10am),0,0"));
  });
});
