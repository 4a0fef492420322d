import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import type { MatchedTrip, VehicleClass } from "../../src/engine/trips/types.js";
import { computeAnalysis } from "../../src/app/analyses/compute.js";
import { at } from "../helpers/network.js";
import { createStreetEnds, streetStore, streetTrip } from "../helpers/street-scenario.js";

// The hand-counted street of od-compute.test.ts: West and East ends, an eastbound Gate between them.
const trip = (device: string, localIso: string, minutes: number, vehicleClass: VehicleClass, east: boolean) =>
  streetTrip({ device, localIso, minutes, vehicleClass, east });

describe("vendor outputs: trip_counts, zone_counts, aadt, od_all_15min and the coverage review", async () => {
  const { store, networks, ctx } = await streetStore();
  const run = async (extra: Record<string, unknown>) =>
    computeAnalysis(
      await validateAnalysisRequest(
        {
          insight_login_email: "p@example.org",
          analysis_type: "OD_Analysis",
          travel_mode_type: "All_Vehicles",
          oz_sets: [{ name: "Street" }, { name: "Gate" }],
          dz_sets: [{ name: "Street" }, { name: "Gate" }],
          date_ranges: [{ start_date: "01/06/2025", end_date: "01/12/2025" }],
          day_types: "Average Day|17",
          day_parts: "All Day|0023",
          country: "mc",
          ...extra,
        },
        ctx,
      ),
      { store, networks, onProgress: () => {} },
    );

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
      trips.push(trip(`truck${i}`, "2025-01-11T12:20:00", 20, "heavy_commercial", true));
    trips.push(trip("car0", "2025-01-07T08:30:00", 6, "personal", false));
    trips.push(trip("car9", "2025-02-20T07:00:00", 10, "personal", true)); // outside the range, same year
    await store.trips.appendTrips("mc", trips);
  });

  // January's 9 devices: each sampled trip stands for 10,000 / 9 = 1,111.1 trips; 7 analysed days.
  const line = (csv: string, prefix: string) => csv.split("\n").find((l) => l.startsWith(prefix));
  const westEast = "All Vehicles,1,West,no,N/A,2,East,no,N/A,0: Average Day (M-Su)";

  it("trip_counts: expanded trips summed over the analysed days, as integers", async () => {
    const index = await run({ output_type: "index" });
    const counts = await run({ output_type: "trip_counts" });
    assert.equal(line(index.od_all, westEast), `${westEast},0: All Day (12am-12am),1429,1429,1429,12`);
    assert.equal(line(counts.od_all, westEast), `${westEast},0: All Day (12am-12am),10000,10000,10000,12`);
  });

  it("zone_counts: each zone's trips once, whether they start, end or pass there", async () => {
    const m = await run({ output_type: "zone_counts" });
    assert.deepEqual(m.zone_counts.trim().split("\n"), [
      "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part,zone_traffic",
      // 9 start in West, car0 ends there: 10 × 1,111.1 / 7.
      "All Vehicles,1,West,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am),1587",
      "All Vehicles,2,East,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am),1587",
      // Eastbound only: car0 going west does not count.
      "All Vehicles,3,Gate,yes,90,0: Average Day (M-Su),0: All Day (12am-12am),1429",
    ]);
  });

  it("aadt: pass-through zones over the year's days with data", async () => {
    const m = await run({ output_type: "aadt", aadt_calibration_year: "2025" });
    // January 9 × 1,111.1 + February's one device 1 × 10,000 = 20,000 over 4 days with data.
    assert.deepEqual(m.aadt.trim().split("\n"), [
      "zone_id,zone_name,zone_direction,year,days_with_data,aadt",
      "3,Gate,90,2025,4,5000",
    ]);
  });

  it("enable_15min: od_all_15min puts each trip in its local quarter hour", async () => {
    const m = await run({ enable_15min: true });
    const rows = m.od_all_15min.split("\n").filter((l) => l.startsWith(westEast));
    assert.deepEqual(rows, [
      `${westEast},28: 7:00am-7:15am,1111,1111,1111,10`,
      `${westEast},49: 12:15pm-12:30pm,317,317,317,20`,
    ]);
    assert.equal((await run({})).od_all_15min, undefined);
  });

  it("reviews coverage: a zone under the sample threshold is flagged", async () => {
    const review = JSON.parse((await run({}))._review);
    assert.equal(review.review_status, "needs_review");
    assert.equal(review.min_zone_sample, 10);
    assert.deepEqual(
      review.zones.map((z: Record<string, unknown>) => [z.zone_name, z.sample_trips, z.flagged]),
      [
        ["West", 10, false],
        ["East", 10, false],
        ["Gate", 9, true],
      ],
    );
    assert.deepEqual(
      review.periods.map((p: Record<string, unknown>) => [p.days_with_data, p.flagged]),
      [[3, false]],
    );
    const westOnly = JSON.parse(
      (await run({ oz_sets: [{ name: "Street" }], dz_sets: [{ name: "Street" }] }))._review,
    );
    assert.equal(westOnly.review_status, "passed");
  });
});
