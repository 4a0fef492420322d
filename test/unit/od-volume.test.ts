import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type AnalysisSpec } from "../../src/domain/analyses/spec.js";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import type { MatchedTrip, VehicleClass } from "../../src/engine/trips/types.js";
import { computeAnalysis } from "../../src/app/analyses/compute.js";
import { at } from "../helpers/network.js";
import { createStreetEnds, streetStore, streetTrip } from "../helpers/street-scenario.js";

// The scenario of od-compute.test.ts, with the eastbound gate counted: AADT 700,
// 80 % personal, 10 % medium and 10 % heavy commercial.
const calibration = {
  calibration_type: "AADT",
  calibration_value: 700,
  personal_traffic_ratio: 0.8,
  medium_commercial_ratio: 0.1,
  heavy_commercial_ratio: 0.1,
};

const trip = (device: string, localIso: string, minutes: number, vehicleClass: VehicleClass, east: boolean) =>
  streetTrip({ device, localIso, minutes, vehicleClass, east });

describe("OD_Analysis volume output (hand-counted)", async () => {
  const { store, networks, ctx } = await streetStore();
  let volumeSpec: (sets: string[]) => Promise<AnalysisSpec>;
  let metrics: Record<string, string>;

  before(async () => {
    const gate = (name: string, id: number, x0: number) => ({
      type: "Feature",
      properties: { name, id, is_pass: 1, direction: 90, ...calibration },
      geometry: { type: "LineString", coordinates: [at(x0, 0), at(x0 + 40, 0)] },
    });
    const zoneSet = async (name: string, features: unknown[], withCalibration = false) =>
      await createZoneSet(
        {
          insight_login_email: "p@example.org",
          zone_set_name: name,
          with_calibration: withCalibration,
          zones: { type: "FeatureCollection", features },
        },
        ctx,
      );
    await createStreetEnds(ctx);
    await zoneSet("Gate", [gate("Gate", 3, 130)], true);
    await zoneSet("Far gate", [gate("Far", 4, 1000)], true); // off the network: no trip passes it
    const trips: MatchedTrip[] = [];
    for (let i = 0; i < 7; i++) trips.push(trip(`car${i}`, "2025-01-06T07:00:00", 10, "personal", true));
    for (let i = 0; i < 2; i++)
      trips.push(trip(`truck${i}`, "2025-01-11T12:00:00", 20, "heavy_commercial", true));
    trips.push(trip("car0", "2025-01-07T08:30:00", 6, "personal", false));
    await store.trips.appendTrips("mc", trips);

    volumeSpec = async (sets) =>
      await validateAnalysisRequest(
        {
          insight_login_email: "p@example.org",
          analysis_type: "OD_Analysis",
          travel_mode_type: "All_Vehicles",
          output_type: "volume",
          oz_sets: sets.map((name) => ({ name })),
          dz_sets: sets.map((name) => ({ name })),
          date_ranges: [{ start_date: "01/06/2025", end_date: "01/12/2025" }],
          day_types: "Average Day|17,Weekend|67",
          day_parts: "All Day|0023,Peak AM|0609",
          country: "mc",
        },
        ctx,
      );
    metrics = await computeAnalysis(await volumeSpec(["Street", "Gate"]), {
      store,
      networks,
      onProgress: () => {},
    });
  });

  // Index traffic through the gate per day of the 7: all 9/7, personal 7/7, commercial and heavy 2/7.
  // Factors: all 700 / (9/7) = 544.44, personal 560 / 1 = 560, commercial 140 / (2/7) = 490,
  // heavy 70 / (2/7) = 245; medium commercial never passed, so it takes the all-vehicle factor.
  const avg = "0: Average Day (M-Su)";
  const wkd = "1: Weekend (Sa-Su)";
  const all = "0: All Day (12am-12am)";
  const am = "1: Peak AM (6am-10am)";
  const w = "1,West,no,N/A";
  const e = "2,East,no,N/A";
  const g = "3,Gate,yes,90";

  it("scales all-vehicle traffic so the gate carries its counted volume", () => {
    const lines = metrics.od_all.split("\n").slice(1);
    assert.deepEqual(lines, [
      `All Vehicles,${w},${e},${avg},${all},700,700,700,12`, // 9 × 544.44 / 7
      `All Vehicles,${w},${e},${avg},${am},544,544,544,10`, // 7 × 544.44 / 7
      `All Vehicles,${w},${g},${avg},${all},700,700,700,12`,
      `All Vehicles,${w},${g},${avg},${am},544,544,544,10`,
      `All Vehicles,${e},${w},${avg},${all},78,78,78,6`, // 1 × 544.44 / 7 = 77.8
      `All Vehicles,${e},${w},${avg},${am},78,78,78,6`,
      `All Vehicles,${g},${e},${avg},${all},700,700,700,12`,
      `All Vehicles,${g},${e},${avg},${am},544,544,544,10`,
      `All Vehicles,${w},${e},${wkd},${all},544,544,544,20`, // 2 × 544.44 / 2
      `All Vehicles,${w},${g},${wkd},${all},544,544,544,20`,
      `All Vehicles,${g},${e},${wkd},${all},544,544,544,20`,
      "",
    ]);
  });

  it("scales each device group with its own share of the counted volume", () => {
    assert.equal(metrics.od_pers.split("\n")[1], `Personal,${w},${e},${avg},${all},560,560,560,10`);
    const comm = metrics.od_comm.split("\n").filter((l) => l.startsWith(`Commercial,${w},${e}`));
    assert.deepEqual(comm, [
      `Commercial,${w},${e},${avg},${all},140,140,140,20`, // 2 × 490 / 7
      `Commercial,${w},${e},${wkd},${all},490,490,490,20`, // 2 × 490 / 2
    ]);
  });

  it("scales the zones' traffic of zone_od_all", () => {
    const lines = metrics.zone_od_all.split("\n");
    assert.ok(lines.includes(`All Vehicles,${g},${avg},${all},700,700`));
    assert.ok(lines.includes(`All Vehicles,${w},${avg},${all},700,78`));
  });

  it("fails with an actionable reason when no trip passed a calibration zone", async () => {
    await assert.rejects(
      async () =>
        computeAnalysis(await volumeSpec(["Street", "Far gate"]), { store, networks, onProgress: () => {} }),
      /volume output: no trip of the analysis passed the calibration zones \("Far"\).*use output_type index/,
    );
  });
});
