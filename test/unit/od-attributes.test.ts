import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import type { TripPurpose } from "../../src/engine/trips/types.js";
import { computeAnalysis } from "../../src/app/analyses/compute.js";
import { createStreetEnds, streetStore, streetTrip } from "../helpers/street-scenario.js";

// The street of od-compute.test.ts: West (x -20..50) and East (x 250..320) end zones,
// trip ends 280 m apart in a straight line (Monaco, UTC+1).

/** A Monday-morning trip; its duration, stored length and attributes are what the metrics read. */
function trip(minutes: number, lengthM: number, east: boolean, purpose?: TripPurpose, incomeBand?: number) {
  return streetTrip({
    device: `d${minutes}`,
    localIso: "2025-01-06T07:00:00",
    minutes,
    lengthM,
    east,
    purpose,
    incomeBand,
  });
}

describe("OD trip and traveler attributes (hand-counted)", async () => {
  const { store, networks, ctx } = await streetStore();
  let metrics: Record<string, string>;

  before(async () => {
    await createStreetEnds(ctx);
    await store.trips.appendTrips("mc", [
      // West → East. duration, km, km/h, circuity (straight line 280 m):
      trip(2, 280, true, "hbw", 1), // 2 min, 0.28, 8.4, 1
      trip(4, 350, true, "hbw", 3), // 4 min, 0.35, 5.25, 1.25
      trip(6, 420, true, "hbo"), // 6 min, 0.42, 4.2, 1.5
      trip(12, 700, true, undefined, 0), // 12 min, 0.7, 3.5, 2.5; band 0 is no band
      // East → West: 3 min, 0.3 (on a bin boundary), 6, 1.07
      trip(3, 300, false, "wbo", 5),
    ]);
    const spec = await validateAnalysisRequest(
      {
        insight_login_email: "p@example.org",
        analysis_name: "Street attributes",
        analysis_type: "OD_Analysis",
        travel_mode_type: "All_Vehicles",
        oz_sets: [{ name: "Street" }],
        dz_sets: [{ name: "Street" }],
        date_ranges: [{ start_date: "01/06/2025", end_date: "01/12/2025" }],
        day_types: "Average Day|17",
        day_parts: "All Day|0023",
        country: "mc",
        trip_attributes: true,
        traveler_attributes: true,
        unit_of_measurement: "km",
        trip_duration_bins: "0-5,5-10,10+",
        trip_length_bins: "0-0.3,0.3-0.5,0.5+",
        trip_speed_bins: "0-5,5-10,10+",
        trip_circuity_bins: "1-1.2,1.2-2,2+",
        enable_speed_percentile: true,
        speed_percentile_bins: "90,50",
      },
      ctx,
    );
    metrics = await computeAnalysis(spec, { store, networks, onProgress: () => {} });
  });

  const identity =
    "device_type,origin_zone_id,origin_zone_name,origin_zone_is_pass_through,origin_zone_direction," +
    "destination_zone_id,destination_zone_name,destination_zone_is_pass_through,destination_zone_direction," +
    "day_type,day_part";
  const we = "All Vehicles,1,West,no,N/A,2,East,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am)";
  const ew = "All Vehicles,2,East,no,N/A,1,West,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am)";

  it("produces the distribution metrics after the OD metrics", () => {
    assert.deepEqual(Object.keys(metrics), [
      "od_all",
      "od_pers",
      "od_comm",
      "zone_od_all",
      "od_trip_duration",
      "od_trip_length",
      "od_trip_speed",
      "od_trip_circuity",
      "od_speed_percentile",
      "od_trip_purpose",
      "od_income",
      "_review",
      "sample_size",
    ]);
  });

  it("spreads each pair's trips over the duration, length, speed and circuity bins", () => {
    assert.equal(
      metrics.od_trip_duration,
      [
        `${identity},trip_duration_0_5,trip_duration_5_10,trip_duration_10_plus`,
        `${we},0.5,0.25,0.25`,
        `${ew},1,0,0`,
        "",
      ].join("\n"),
    );
    assert.equal(
      metrics.od_trip_length,
      [
        `${identity},trip_length_km_0_0.3,trip_length_km_0.3_0.5,trip_length_km_0.5_plus`,
        `${we},0.25,0.5,0.25`,
        `${ew},0,1,0`,
        "",
      ].join("\n"),
    );
    assert.equal(
      metrics.od_trip_speed,
      [
        `${identity},trip_speed_kph_0_5,trip_speed_kph_5_10,trip_speed_kph_10_plus`,
        `${we},0.5,0.5,0`,
        `${ew},0,1,0`,
        "",
      ].join("\n"),
    );
    assert.equal(
      metrics.od_trip_circuity,
      [
        `${identity},trip_circuity_1_1.2,trip_circuity_1.2_2,trip_circuity_2_plus`,
        `${we},0.25,0.5,0.25`,
        `${ew},1,0,0`,
        "",
      ].join("\n"),
    );
  });

  it("reports nearest-rank speed percentiles", () => {
    // West → East speeds 3.5, 4.2, 5.25, 8.4: p50 is the 2nd, p90 the 4th.
    assert.equal(
      metrics.od_speed_percentile,
      [`${identity},speed_kph_p50,speed_kph_p90`, `${we},4.2,8.4`, `${ew},6,6`, ""].join("\n"),
    );
  });

  it("spreads trips over purposes and income bands, unknown when the trip carries none", () => {
    assert.equal(
      metrics.od_trip_purpose,
      [
        `${identity},purpose_hbw,purpose_hbo,purpose_nhbw,purpose_wbo,purpose_unknown`,
        `${we},0.5,0.25,0,0,0.25`,
        `${ew},0,0,0,1,0`,
        "",
      ].join("\n"),
    );
    assert.equal(
      metrics.od_income,
      [
        `${identity},income_band_1,income_band_2,income_band_3,income_band_4,income_band_5,income_unknown`,
        `${we},0.25,0,0.25,0,0,0.5`,
        `${ew},0,0,0,0,1,0`,
        "",
      ].join("\n"),
    );
  });
});
