import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { ValidationError } from "../../src/domain/errors.js";
import { computeAnalysis } from "../../src/app/analyses/compute.js";
import {
  createStreetEnds,
  EMAIL,
  seedStreetQuarters,
  streetStore,
  streetTrip,
  streetWeekTrips,
} from "../helpers/street-scenario.js";

const request = (extra: Record<string, unknown>) => ({
  insight_login_email: EMAIL,
  analysis_name: "To quarters",
  analysis_type: "od_preset_geography",
  travel_mode_type: "All_Vehicles",
  oz_sets: [{ name: "Street" }],
  geography_type: "ADMIN_10",
  date_ranges: [{ start_date: "01/06/2025", end_date: "01/12/2025" }],
  day_types: "Average Day|17",
  day_parts: "All Day|0023",
  country: "mc",
  ...extra,
});

describe("OD_Preset_Geography (hand-counted)", async () => {
  const { store, networks, ctx } = await streetStore();
  let metrics: Record<string, string>;

  before(async () => {
    await createStreetEnds(ctx);
    await seedStreetQuarters(store);
    const trips = streetWeekTrips();
    trips.push(streetTrip({ device: "car9", localIso: "2025-01-20T07:00:00", minutes: 10 })); // after the range
    await store.trips.appendTrips("mc", trips);
    const spec = await validateAnalysisRequest(request({}), ctx);
    assert.equal(spec.analysisType, "OD_Preset_Geography");
    assert.deepEqual(spec.options, { geographyType: "admin_10" });
    metrics = await computeAnalysis(spec, { store, networks, onProgress: () => {} });
  });

  it("counts trips from each origin zone to the quarter they end in", () => {
    // 10 devices in January: each trip stands for 1,000. West → East Quarter: 9 trips in 7 days
    // (9,000 / 7 = 1,286), 7 of 10 minutes and 2 of 20 (avg 12). East → West Quarter: one of 6 minutes.
    const rows = metrics.od_all.split("\n");
    assert.equal(rows[0].split(",")[5], "destination_zone_id");
    const day = "0: Average Day (M-Su),0: All Day (12am-12am)";
    assert.deepEqual(rows.slice(1), [
      `All Vehicles,1,West,no,N/A,502,East Quarter,no,N/A,${day},1286,1286,1286,12`,
      `All Vehicles,2,East,no,N/A,501,West Quarter,no,N/A,${day},143,143,143,6`,
      "",
    ]);
  });

  it("lists each quarter's arrivals in zone_od_all, as destinations only", () => {
    const lines = metrics.zone_od_all.split("\n");
    assert.ok(
      lines.includes(
        "All Vehicles,502,East Quarter,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am),N/A,1286",
      ),
    );
    assert.ok(
      lines.includes("All Vehicles,1,West,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am),1286,N/A"),
    );
  });

  it("refuses a geography the country lacks, listing the valid ones, and destination sets", async () => {
    const issues = async (body: Record<string, unknown>) => {
      try {
        await validateAnalysisRequest(body, ctx);
      } catch (e) {
        if (e instanceof ValidationError) return e.issues.map((i) => `${i.field}: ${i.message}`);
        throw e;
      }
      return [];
    };
    assert.deepEqual(await issues(request({ geography_type: "zip" })), [
      'geography_type: unknown geography_type "zip" for country "mc"; valid: admin_10',
    ]);
    assert.match((await issues(request({ geography_type: undefined })))[0], /^geography_type: is required/);
    assert.match((await issues(request({ dz_sets: [{ name: "Street" }] })))[0], /^dz_sets: is not used by/);
  });
});
