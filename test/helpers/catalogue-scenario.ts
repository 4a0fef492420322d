import { join } from "node:path";
import { after, before } from "node:test";
import { JobRunner } from "../../src/jobs/runner.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeTestApp, type TestContext } from "./app.js";
import type { Segment } from "../../src/engine/network/types.js";
import { boxZone, seedStreetQuarters, STREET, streetWeekTrips } from "./street-scenario.js";
import { at } from "./network.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import { tempDir } from "./temp-dir.js";
import { startQuickRunner } from "./analyses.js";

/**
 * The hand-counted street of street-scenario.ts served over HTTP with a job runner on a
 * file store: zone set "Street" (West, East end zones), quarters 501/502 as preset geography
 * admin_10, "Middle" (pass-through Centre, x 120..180), "Gate" (a line zone along the middle
 * segment), "Way 1" (the street's OSM way as a line zone), "Block" (a polygon over the whole street), "Counted" (a pass-through
 * count station at x 140..160 with a counted AADT of 7,407, 80 % personal),
 * and the week of 6-12 January 2025: 7 cars eastbound Monday 07:00 (10 min),
 * 2 trucks eastbound Saturday noon (20 min), 1 car westbound Tuesday 08:30 (6 min).
 */
export async function catalogueApp(): Promise<AnalysisApp> {
  return await analysisApp("streetflow-catalogue-", STREET, async (ctx) => {
    await seedStreetQuarters(ctx.store);
    await streetZoneSets(ctx);
    await ctx.store.trips.appendTrips("mc", streetWeekTrips());
  });
}

export interface AnalysisApp {
  ctx: TestContext;
  runner: JobRunner;
}

/**
 * A file store holding `segments` as country "mc", the test app over it and a quick job runner; `fill`
 * adds zone sets and trips before the runner starts.
 */
export async function analysisApp(
  dirPrefix: string,
  segments: Segment[],
  fill: (ctx: TestContext) => Promise<void>,
): Promise<AnalysisApp> {
  const store = new SqliteStore(join(tempDir(dirPrefix), "streetflow.db"));
  await store.network.replaceCountry(
    { country: "mc", source: "test", segmentCount: segments.length, importedAt: "" },
    segments,
  );
  const ctx = await makeTestApp(store);
  await fill(ctx);
  const runner = await startQuickRunner(
    store,
    new URL("../../src/app/analyses/compute.ts", import.meta.url).href,
  );
  return { ctx, runner };
}

/** Creates a zone set of `features` as orgA's user. */
export async function zoneSetOf(ctx: TestContext, name: string, features: unknown[]): Promise<void> {
  await createZoneSet(
    {
      insight_login_email: ctx.orgA.email,
      zone_set_name: name,
      zones: { type: "FeatureCollection", features },
    },
    { store: ctx.store, networks: ctx.networks, orgId: ctx.orgA.orgId },
  );
}

async function streetZoneSets(ctx: TestContext): Promise<void> {
  const store = ctx.store;
  await zoneSetOf(ctx, "Street", [boxZone("West", 1, -20, 50), boxZone("East", 2, 250, 320)]);
  const zoneCtx = { store, networks: ctx.networks, orgId: ctx.orgA.orgId };
  await zoneSetOf(ctx, "Middle", [boxZone("Centre", 3, 120, 180, { is_pass: 1 })]);
  await zoneSetOf(ctx, "Gate", [
    {
      type: "Feature",
      properties: { name: "Gate", id: 4 },
      geometry: { type: "LineString", coordinates: [at(130, 0), at(170, 0)] },
    },
  ]);
  await zoneSetOf(ctx, "Block", [boxZone("Block", 5, -20, 320)]);
  await createZoneSet(
    {
      insight_login_email: ctx.orgA.email,
      zone_set_name: "Counted",
      with_calibration: true,
      zones: {
        type: "FeatureCollection",
        features: [
          boxZone("Count station", 6, 140, 160, {
            is_pass: 1,
            calibration_type: "AADT",
            calibration_value: 7407,
            personal_traffic_ratio: 0.8,
            medium_commercial_ratio: 0,
            heavy_commercial_ratio: 0.2,
          }),
        ],
      },
    },
    zoneCtx,
  );
  await createZoneSet({ insight_login_email: ctx.orgA.email, zone_set_name: "Way 1", osm_ids: [1] }, zoneCtx);
}

/** Polls the analysis' status until it leaves Processing; answers the final status entry. */
export async function finished(
  ctx: TestContext,
  uuid: string,
): Promise<{ status: string; metrics: string[] }> {
  for (;;) {
    const res = await ctx.app.inject({
      method: "POST",
      url: `/api/v2/analyses/status?key=${ctx.orgA.key}`,
      payload: { analyses: [{ uuid }] },
    });
    const entry = res.json().analyses[0];
    if (entry.status !== "Processing") return entry;
    await new Promise((r) => setTimeout(r, 100)); // well under the per-key rate limit
  }
}

/**
 * An analysis app for one test suite (started by `start` before its tests, stopped after them) and the
 * requests its tests make as orgA: a create body (`defaults`, then `extra`), creating, fetching a result
 * (`get`) and its text (`download`).
 */
export function analysisSuite(start: () => Promise<AnalysisApp>, defaults: Record<string, unknown>) {
  let app: AnalysisApp | null = null;
  before(async () => {
    app = await start();
  });
  after(async () => {
    await app!.runner.stop();
    await app!.ctx.app.close();
    await app!.ctx.store.close();
  });
  const ctx = () => app!.ctx;
  const get = (uuid: string, metric: string) =>
    ctx().app.inject({
      method: "GET",
      url: `/api/v2/analyses/download/uuid/${uuid}/${metric}?key=${ctx().orgA.key}`,
    });
  return {
    ctx,
    base: (extra: Record<string, unknown>) => ({
      insight_login_email: ctx().orgA.email,
      ...defaults,
      ...extra,
    }),
    create: (body: Record<string, unknown>) =>
      ctx().app.inject({ method: "POST", url: `/api/v2/analyses?key=${ctx().orgA.key}`, payload: body }),
    get,
    download: async (uuid: string, metric: string) => (await get(uuid, metric)).body,
  };
}

/** All vehicles over the street week, all day, from the Street zones (the catalogue tests' common fields). */
export const STREET_WEEK = {
  travel_mode_type: "All_Vehicles",
  oz_sets: [{ name: "Street" }],
  date_ranges: [{ start_date: "01/06/2025", end_date: "01/12/2025" }],
  day_types: "Average Day|17",
  day_parts: "All Day|0023",
};

/** The catalogue app for one test suite; `start` may add to it (zone sets) after it started. */
export const catalogueSuite = (
  defaults: Record<string, unknown> = {},
  start: () => Promise<AnalysisApp> = catalogueApp,
) => analysisSuite(start, { ...STREET_WEEK, ...defaults });
