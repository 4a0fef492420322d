import { ANALYSIS_WORKER } from "../../src/main/runtime.js";
import type { DayCount, StoredZoneSet, ZoneFeature } from "../../src/domain/records.js";
import type { Store } from "../../src/app/ports/store.js";
import { at, seg } from "./network.js";
import { JobRunner, type RunnerOptions } from "../../src/jobs/runner.js";
import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

/** The test compute module: fast, controllable analyses (see test-compute.ts). */
export const TEST_COMPUTE = new URL("./test-compute.ts", import.meta.url).href;

/** A started job runner that polls and beats every 20 ms, so tests see state changes at once. */
export async function startQuickRunner(
  store: SqliteStore,
  computeModule: string,
  options: Partial<RunnerOptions> = {},
): Promise<JobRunner> {
  return await new JobRunner({
    store,
    queue: store.jobs,
    workerStore: { kind: "sqlite", file: store.file },
    workerModule: ANALYSIS_WORKER,
    pollMs: 20,
    leaseMs: 5000,
    heartbeatMs: 20,
    computeModule,
    ...options,
  }).start();
}

/** A square polygon zone `sizeM` metres wide with its south-west corner at (x, y) metres from ORIGIN. */
export function squareZone(
  name: string,
  id: number,
  x: number,
  y: number,
  sizeM = 50,
  extra = {},
): ZoneFeature {
  const ring = [at(x, y), at(x + sizeM, y), at(x + sizeM, y + sizeM), at(x, y + sizeM), at(x, y)];
  return {
    type: "Feature",
    geometry: { type: "MultiPolygon", coordinates: [[ring]] },
    properties: { name, id, is_pass: 0, direction: null, is_bidi: 0, geom_type: "polygon", ...extra },
  };
}

export function zoneSet(
  orgId: string,
  name: string,
  features: ZoneFeature[],
  withCalibration = false,
): StoredZoneSet {
  return {
    uuid: crypto.randomUUID(),
    orgId,
    name,
    geomType: "polygon",
    withCalibration,
    zoneCount: features.length,
    createdAt: new Date().toISOString(),
    featureCollection: { type: "FeatureCollection", features },
  };
}

/** Day tallies: 2 trucks making 5 trips on each listed day; personal cars on the first. */
export function truckDays(days: string[]): DayCount[] {
  return [
    ...days.map((day) => ({
      day,
      vehicleClass: "heavy_commercial",
      source: "telematics",
      trips: 5,
      devices: 2,
    })),
    { day: days[0], vehicleClass: "personal", source: "lbs", trips: 100, devices: 40 },
  ];
}

/**
 * The data of one organization's analyses: the "mc" network (a road near
 * ORIGIN), zone sets "Downtown" and "Harbour" (plain) and "Counted"
 * (a calibrated pass-through zone), and truck trips on days of
 * January and February 2025.
 */
export async function seedAnalysisData(store: Store, orgId: string): Promise<{ downtown: StoredZoneSet }> {
  if (!(await store.network.countries()).some((c) => c.country === "mc")) {
    const info = { country: "mc", source: "test", segmentCount: 1, importedAt: new Date().toISOString() };
    await store.network.replaceCountry(info, [
      seg(1, 0, 1, 2, [
        [0, 0],
        [500, 0],
      ]),
    ]);
    // January: Wed 1st, Mon 6th, Sat 11th; February: Tue 4th.
    await store.tripStats.addDayCounts(
      "mc",
      truckDays(["2025-01-01", "2025-01-06", "2025-01-11", "2025-02-04"]),
    );
  }
  const downtown = zoneSet(orgId, "Downtown", [
    squareZone("Centre", 1, 0, -25),
    squareZone("East", 2, 200, -25),
  ]);
  await store.zoneSets.create(downtown);
  await store.zoneSets.create(zoneSet(orgId, "Harbour", [squareZone("Quay", 1, 400, -25)]));
  const gate = squareZone("Gate", 1, 100, -25, 20, {
    is_pass: 1,
    calibration_type: "AADT",
    calibration_value: 12000,
  });
  await store.zoneSets.create(zoneSet(orgId, "Counted", [gate], true));
  return { downtown };
}

/** A valid request body over the seeded data. */
export function odRequest(email: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    insight_login_email: email,
    analysis_type: "OD_Analysis",
    travel_mode_type: "Truck",
    output_type: "index",
    oz_sets: [{ name: "Downtown" }],
    dz_sets: [{ name: "Harbour" }],
    date_ranges: [{ start_date: "01/01/2025", end_date: "01/31/2025" }],
    traveler_attributes: false,
    trip_attributes: false,
    ...extra,
  };
}
