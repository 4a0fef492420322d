import { availableParallelism } from "node:os";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_EMAIL, DEMO_ORG, issueApiKey } from "../app/accounts.js";
import { generatePassword } from "../domain/security/passwords.js";
import { setPassword } from "../app/security/sessions.js";
import { importNetwork } from "../app/network-import.js";
import { tripMatcher } from "../engine/matching/index.js";
import { MatchPool } from "../engine/ingest/match-pool.js";
import type { TraceSource } from "../engine/trips/types.js";
import { simulateTransitRiders, storeSimulatedRiders, type SimulatedRiders } from "../app/transit.js";
import { addIngestReport, emptyIngestReport, formatIngestReport, ingestFiles } from "../app/ingest.js";
import { DemoSimulations } from "./demo-simulation.js";
import type { AppContext } from "../app/context.js";

/** The shipped demo network (repo `data/osm/`), resolved from src/ or dist/ alike. */
export const DEMO_PBF = resolve(fileURLToPath(import.meta.url), "../../../data/osm/monaco.osm.pbf");
export const DEMO_COUNTRY = "mc";

export const DEMO_KEY_FILE = "demo-api-key.txt";
export const DEMO_PASSWORD_FILE = "demo-password.txt";

/**
 * First start on an empty store: the demo account (see ensureDemoAccount), the Monaco network and a year of
 * simulated trips.
 */
export async function ensureDemoData(
  ctx: AppContext,
  dataDir: string,
  log: (line: string) => void,
): Promise<void> {
  // API processes started at once on an empty database make the demo once: the others wait, then find it.
  await ctx.store.exclusively("demo-data", async () => await makeDemoData(ctx, dataDir, log));
}

async function makeDemoData(ctx: AppContext, dataDir: string, log: (line: string) => void): Promise<void> {
  await ensureDemoAccount(ctx, dataDir, log);
  if (!(await ctx.store.network.countries()).some((c) => c.country === DEMO_COUNTRY)) {
    log(`Importing the demo road network (Monaco, © OpenStreetMap contributors) as "${DEMO_COUNTRY}"...`);
    await importNetwork(ctx, DEMO_PBF, DEMO_COUNTRY, log);
  }
  if ((await ctx.store.trips.countTrips(DEMO_COUNTRY)) === 0) await loadDemoTrips(ctx, dataDir, log);
}

/**
 * A demo organization with an admin user and a key. The user's generated password and the key are printed
 * and written side by side in the data directory, so a newcomer can sign in or curl at once.
 */
export async function ensureDemoAccount(
  ctx: AppContext,
  dataDir: string,
  log: (line: string) => void,
): Promise<void> {
  if (await ctx.store.accounts.isEmpty()) {
    const org = await ctx.store.accounts.createOrganization(DEMO_ORG);
    await ctx.store.accounts.addUser(DEMO_EMAIL, org.id, "admin");
    const { key } = await issueApiKey(ctx.store, org.id, "demo");
    const file = join(dataDir, DEMO_KEY_FILE);
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    log(`Demo organization "${DEMO_ORG}", user ${DEMO_EMAIL}`);
    log(`Demo API key: ${key}  (also in ${file})`);
  }
  // Also for a store made before passwords existed: the demo admin gets one the first time.
  const demoUser = (await ctx.store.security.organizationsOf(DEMO_EMAIL)).length > 0;
  if (demoUser && !(await ctx.store.security.passwordHashOf(DEMO_EMAIL))) {
    const password = generatePassword();
    await setPassword(ctx.store, DEMO_EMAIL, password);
    const file = join(dataDir, DEMO_PASSWORD_FILE);
    writeFileSync(file, `${password}\n`, { mode: 0o600 });
    log(`Demo sign-in: ${DEMO_EMAIL} with password ${password}  (also in ${file})`);
  }
}

/** Demo trips per day: a year of them simulates, matches and stores in well under a minute. */
export const DEMO_TRIPS_PER_DAY = 30;
/**
 * Share of days a demo phone is seen, as in a location panel: the same trips per day come from about 20 times
 * as many people (230 instead of 12), each with a stable home and work place over the year, so that a few
 * months of data place at least 5 devices (the privacy minimum) in many 500 m cells and the home and work
 * locations of Zone_Activity_Analysis show real shares (docs/analyses.md).
 */
export const DEMO_PHONE_PRESENCE = 0.05;
/** Trips per day of the demo's connected-vehicle (telematics) fleet, the data of All_Vehicles_CVD_Plus. */
export const DEMO_CVD_TRIPS_PER_DAY = 5;
/** Transit rider journeys per day (bus or rail, with their walks): the data of the Bus and Rail modes. */
export const DEMO_TRANSIT_RIDERS_PER_DAY = 10;

/** The twelve full months before `today`, as simulate's from/to. */
export function demoYear(today = new Date()): { from: string; to: string } {
  const month = (offset: number) => {
    const d = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + offset, 1));
    return d.toISOString().slice(0, 7);
  };
  return { from: month(-12), to: month(-1) };
}

/**
 * A year of demo data on the demo network, with data in every travel mode (fixed seeds, so every
 * fresh install has the same data): location-based traces of every road class and a small
 * connected-vehicle fleet, ingested like any other traces (split, map-matched, stored), and
 * transit riders on the imported bus routes and rail lines, stored as they travelled.
 * Traces are simulated on a worker thread while earlier months are matched (on worker threads too)
 * and stored, so a first start uses every core. The transit riders are simulated first, on this
 * thread, while it would otherwise wait for the first month's traces (the slowest month to simulate)
 * with a core idle; they are stored last, as before: stored first, they made every later batch's
 * segment-month merges dearer (1.5–3 s more CPU against ~1 s saved; docs/performance.md).
 */
async function loadDemoTrips(ctx: AppContext, dataDir: string, log: (line: string) => void): Promise<void> {
  const network = await ctx.networks.get(DEMO_COUNTRY);
  if (!network) return;
  const { from, to } = demoYear();
  const simulations = new DemoSimulations(network);
  const matchPool = new MatchPool(network, availableParallelism());
  let riders: SimulatedRiders | null = null;
  try {
    // Both asked now: the fleet is simulated while the first traces are still being ingested.
    const lbs = simulations.months(join(dataDir, "demo-traces"), {
      from,
      to,
      tripsPerDay: DEMO_TRIPS_PER_DAY,
      seed: 2024,
      source: "lbs",
      presence: DEMO_PHONE_PRESENCE,
    });
    const cvd = simulations.months(join(dataDir, "demo-traces-cvd"), {
      from,
      to,
      tripsPerDay: DEMO_CVD_TRIPS_PER_DAY,
      seed: 2025,
      source: "telematics",
      // Connected vehicles are cars and trucks.
      vehicleMix: { bicycle: 0, pedestrian: 0 },
    });
    log(`Simulating demo trips ${from} to ${to} (${DEMO_TRIPS_PER_DAY} per day) on a worker thread...`);
    log(`Simulating transit riders (${DEMO_TRANSIT_RIDERS_PER_DAY} journeys per day) meanwhile...`);
    const opts = { from, to, ridersPerDay: DEMO_TRANSIT_RIDERS_PER_DAY, seed: 2024 };
    riders = await simulateTransitRiders(ctx, DEMO_COUNTRY, opts, (l) => log(`  ${l}`));
    log(`Map-matching the demo trips...`);
    await ingestMonths(ctx, lbs, "lbs", matchPool, log);
    log(`Map-matching a connected-vehicle fleet (${DEMO_CVD_TRIPS_PER_DAY} trips per day)...`);
    await ingestMonths(ctx, cvd, "telematics", matchPool, log);
  } finally {
    await Promise.all([simulations.close(), matchPool.close()]);
  }
  if (riders) await storeSimulatedRiders(ctx, riders, (l) => log(`  ${l}`));
}

/** Ingests each month's trace file as it comes, with one pool of matching threads; one report for all. */
async function ingestMonths(
  ctx: AppContext,
  files: AsyncIterable<string>,
  source: TraceSource,
  matchPool: MatchPool,
  log: (line: string) => void,
): Promise<void> {
  // Required by ingestFiles; with a pool the trips are matched on its threads.
  const matcher = tripMatcher(matchPool.network);
  const report = emptyIngestReport();
  for await (const file of files) {
    const month = await ingestFiles(ctx, [file], {
      country: DEMO_COUNTRY,
      source,
      vehicleClass: "personal",
      matcher,
      matchPool,
      onProgress: (line) => line.includes(": done") && log(`  ${line.slice(line.lastIndexOf("/") + 1)}`),
    });
    addIngestReport(report, month);
  }
  for (const line of formatIngestReport(report)) log(`  ${line}`);
}
