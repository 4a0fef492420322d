import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import type { Device } from "../../src/engine/simulate/index.js";
import { distanceM } from "../../src/engine/analysis/home-work.js";
import { aggregateOd } from "../../src/app/analyses/od-metrics.js";
import { HomeWorkScan } from "../../src/app/analyses/home-work-metrics.js";
import type { AppContext } from "../../src/app/context.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { boxFeature } from "../helpers/zones.js";
import { PLANNER_EMAIL, simulatedMonacoMonth } from "../helpers/simulated-month.js";
import type { LonLat } from "../../src/engine/network/types.js";

const EMAIL = PLANNER_EMAIL;

/** Distance errors of inferred places against the true ones: how many were placed, and how well. */
function score(pairs: { truth: LonLat; inferred: LonLat | null }[]) {
  const errors = pairs
    .filter((p) => p.inferred !== null)
    .map((p) => distanceM(p.truth, p.inferred!))
    .sort((a, b) => a - b);
  const within = (m: number) => errors.filter((e) => e <= m).length / Math.max(1, errors.length);
  return {
    devices: pairs.length,
    placed: errors.length,
    median: errors[Math.floor(errors.length / 2)] ?? NaN,
    within200: within(200),
    within500: within(500),
  };
}

const describeScore = (s: ReturnType<typeof score>) =>
  `${s.placed} of ${s.devices} placed, median error ${Math.round(s.median)} m, ` +
  `${Math.round(s.within200 * 100)} % within 200 m, ${Math.round(s.within500 * 100)} % within 500 m`;

/**
 * Inferred homes and work places against the simulation's own: one simulated month on the Monaco
 * network (100 trips a day, seed 7, phones), ingested through the real splitter and matcher, and the
 * zone activity scan that the analysis runs.
 */
describe("home and work inference against the simulation's ground truth (Monaco, one month)", () => {
  const dir = mkdtempSync(join(tmpdir(), "sf-home-work-truth-"));
  const store = new SqliteStore(":memory:");
  let rt: AppContext;
  let devices: Device[];
  let ctx: { store: SqliteStore; networks: NetworkRegistry; orgId: string };

  before(async () => {
    const month = await simulatedMonacoMonth(store, dir, { tripsPerDay: 100, seed: 7 });
    ({ rt, ctx } = month);
    devices = month.sim.devices;
    await createZoneSet(
      {
        insight_login_email: EMAIL,
        zone_set_name: "Monaco",
        zones: {
          type: "FeatureCollection",
          features: [boxFeature("Monaco", 1, [7.37, 43.72, 7.45, 43.77])],
        },
      },
      ctx,
    );
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("places most homes within 200 m of the true home, and work places near the true ones", async (t) => {
    const spec = await validateAnalysisRequest(
      {
        insight_login_email: EMAIL,
        analysis_name: "Homes",
        analysis_type: "Zone_Activity_Analysis",
        travel_mode_type: "All_Vehicles",
        oz_sets: [{ name: "Monaco" }],
        date_ranges: [{ start_date: "03/01/2025", end_date: "03/31/2025" }],
        day_types: "All Days|17",
        day_parts: "All Day|0023",
        country: "mc",
        enable_home_work_locations: true,
        hwl_enable_resident: true,
      },
      ctx,
    );
    const compute = { store, networks: rt.networks, onProgress: () => {} };
    const scan = (await HomeWorkScan.of(spec, compute))!;
    await aggregateOd({ ...spec, destinationSets: spec.originSets }, compute, scan.watch, scan.everyTrip);
    const inferred = scan.inferredPlaces();
    // People only (fleet vehicles have depots), with stored trips in the month.
    const people = devices.filter((d) => !d.commercial && inferred.has(d.id));
    const homes = score(people.map((d) => ({ truth: d.home.point, inferred: inferred.get(d.id)!.home })));
    const workers = people.filter((d) => d.work !== null);
    const work = score(workers.map((d) => ({ truth: d.work!.point, inferred: inferred.get(d.id)!.work })));
    const invented = people.filter((d) => d.work === null && inferred.get(d.id)!.work !== null).length;
    t.diagnostic(`homes: ${describeScore(homes)}`);
    t.diagnostic(
      `work places: ${describeScore(work)}; ${invented} of ${people.length - workers.length} non-workers given one`,
    );
    assert.ok(homes.devices >= 25, "enough people to mean something");
    assert.ok(homes.placed >= 0.9 * homes.devices, "nearly every person gets a home");
    assert.ok(homes.within200 >= 0.9, "homes within 200 m");
    assert.ok(work.placed >= 0.7 * work.devices, "most workers get a work place");
    assert.ok(work.within500 >= 0.8, "work places within 500 m");
    assert.ok(invented <= 0.2 * (people.length - workers.length), "few non-workers get a work place");
  });
});
