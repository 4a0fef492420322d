import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { TRAVEL_MODES } from "../../src/domain/travel-modes.js";
import type { MatchedTrip, TraceSource, VehicleClass } from "../../src/engine/trips/types.js";
import { computeAnalysis } from "../../src/app/analyses/compute.js";
import { createStreetEnds, EMAIL, streetStore, streetTrip } from "../helpers/street-scenario.js";

/**
 * One street, trips of every class and source on Monday 6 January 2025 (east, West → East):
 * each mode's analysis reads only its own travellers and names its metrics with the mode's suffix.
 */
const STORED: [VehicleClass, TraceSource, number][] = [
  ["personal", "lbs", 5],
  ["personal", "telematics", 3],
  ["medium_commercial", "telematics", 2],
  ["heavy_commercial", "lbs", 1],
  ["bicycle", "lbs", 4],
  ["pedestrian", "lbs", 6],
  ["bus", "lbs", 7],
  ["rail", "lbs", 8],
];

/** Mode → metric names and the trips its sample size counts. */
const EXPECTED: Record<string, { metrics: string[]; trips: number }> = {
  All_Vehicles: { metrics: ["od_all", "od_pers", "od_comm", "zone_od_all"], trips: 11 },
  All_Vehicles_LBS_Plus: { metrics: ["od_all", "od_pers", "od_comm", "zone_od_all"], trips: 6 },
  All_Vehicles_CVD_Plus: { metrics: ["od_all", "od_pers", "od_comm", "zone_od_all"], trips: 5 },
  All_Vehicles_By_Weight: { metrics: ["od_all", "od_pers", "od_comm", "zone_od_all"], trips: 11 },
  Personal: { metrics: ["od_all", "zone_od_all"], trips: 8 },
  Truck: { metrics: ["od_comm", "zone_od_comm"], trips: 3 },
  Bus: { metrics: ["od_bus", "zone_od_bus"], trips: 7 },
  Rail: { metrics: ["od_rail", "zone_od_rail"], trips: 8 },
  Bicycle: { metrics: ["od_bike", "zone_od_bike"], trips: 4 },
  Pedestrian: { metrics: ["od_ped", "zone_od_ped"], trips: 6 },
};

describe("travel modes of OD analyses", async () => {
  const { store, networks, ctx } = await streetStore();
  const results = new Map<string, Record<string, string>>();

  before(async () => {
    await createStreetEnds(ctx);
    const trips: MatchedTrip[] = [];
    for (const [vehicleClass, source, n] of STORED)
      for (let i = 0; i < n; i++)
        trips.push({
          ...streetTrip({
            device: `${vehicleClass}-${source}-${i}`,
            localIso: "2025-01-06T08:00:00",
            minutes: 10,
            vehicleClass,
          }),
          source,
        });
    await store.trips.appendTrips("mc", trips);
    for (const mode of Object.keys(TRAVEL_MODES)) {
      const spec = await validateAnalysisRequest(
        {
          insight_login_email: EMAIL,
          analysis_name: `Street ${mode}`,
          analysis_type: "OD_Analysis",
          travel_mode_type: mode,
          output_type: "index",
          oz_sets: [{ name: "Street" }],
          dz_sets: [{ name: "Street" }],
          date_ranges: [{ start_date: "01/06/2025", end_date: "01/06/2025" }],
          day_types: "Monday|11",
          day_parts: "All Day|0023",
          country: "mc",
        },
        ctx,
      );
      results.set(mode, await computeAnalysis(spec, { store, networks, onProgress: () => {} }));
    }
  });

  it("offers every vendor mode", () => {
    assert.deepEqual(Object.keys(TRAVEL_MODES).sort(), Object.keys(EXPECTED).sort());
  });

  for (const [mode, want] of Object.entries(EXPECTED))
    it(`${mode}: metrics ${want.metrics.join(", ")} over ${want.trips} trips`, () => {
      const metrics = results.get(mode)!;
      // Names starting with "_" are internal results (the coverage review), never listed as metrics.
      const listed = Object.keys(metrics).filter((name) => !name.startsWith("_"));
      assert.deepEqual(listed, [...want.metrics, "sample_size"]);
      const sample = metrics.sample_size.trimEnd().split("\n")[1].split(",");
      assert.equal(sample.at(-1), String(want.trips), "sample size trip count");
      // The mode's own OD pair West → East holds all of its trips' (index) traffic.
      const od = metrics[want.metrics[0]].trimEnd().split("\n");
      assert.ok(od.length > 1, "the OD metric has rows");
    });

  it("splits commercial traffic by weight in Truck and All_Vehicles_By_Weight, not in All_Vehicles", () => {
    const deviceTypes = (mode: string) => [
      ...new Set(
        results
          .get(mode)!
          .od_comm.trimEnd()
          .split("\n")
          .slice(1)
          .map((l) => l.split(",")[0]),
      ),
    ];
    assert.deepEqual(deviceTypes("All_Vehicles"), ["Commercial"]);
    assert.deepEqual(deviceTypes("All_Vehicles_By_Weight"), [
      "Commercial",
      "Medium Commercial",
      "Heavy Commercial",
    ]);
    assert.deepEqual(deviceTypes("Truck"), ["Commercial", "Medium Commercial", "Heavy Commercial"]);
  });

  it("names the device type of single-kind modes after the mode", () => {
    for (const [mode, metric, name] of [
      ["Bus", "od_bus", "Bus"],
      ["Rail", "od_rail", "Rail"],
      ["Bicycle", "od_bike", "Bicycle"],
      ["Pedestrian", "od_ped", "Pedestrian"],
    ])
      assert.equal(results.get(mode)![metric].split("\n")[1].split(",")[0], name);
  });
});
