/**
 * An analysis type at scale:
 * `npm run bench -- analysis [trips=1000000] [zones=1000] [type=OD_Analysis] [extra request fields as JSON]`.
 * Besides OD_Analysis (grid to grid): OD_MF_Analysis (grid → the pass-through cells → grid),
 * Segment_Analysis (every road segment of the pass-through cells), AADT (the pass-through cells),
 * Top_Routes_OD (grid to grid), Top_Routes_ZA and Zone_Activity_Analysis (the grid), Network_Performance
 * and Network_OD (up to `zones` main-road OSM ways as line zones, both sides for OD), OD_Preset_Geography
 * (grid → the extract's communes, `admin_8`; another level through the JSON). The JSON adds
 * request fields, e.g. home and work locations:
 * `'{"enable_home_work_locations":true,"hwl_enable_visitor":true,"hwl_enable_resident":true,"hwl_enable_worker":true}'`.
 * Synthetic matched trips (random fastest car paths on the Liechtenstein extract, the largest
 * in the shared data) are stored once in a temp SQLite store, cached under the OS temp dir by
 * size; its administrative boundaries are loaded as preset areas as a network import would (11 communes
 * admin_8, 2 regions admin_6, the country admin_2); 1,000 polygon zones in a grid over the network
 * (every 100th a pass-through zone) are then analysed in-process with `computeAnalysis`, as the job
 * worker would.
 */
import { createHash } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { validateAnalysisRequest } from "../src/app/analyses/validate.js";
import { presetAreasOf } from "../src/domain/preset-geographies.js";
import { readAdminAreas } from "../src/engine/network/admin-areas.js";
import { createZoneSet } from "../src/app/zone-sets.js";
import { Network } from "../src/engine/network/network.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { NetworkRegistry } from "../src/engine/network/registry.js";
import { storeNetworks } from "../src/app/networks.js";
import type { MatchedTrip } from "../src/engine/trips/types.js";
import { computeAnalysis } from "../src/app/analyses/compute.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Store } from "../src/app/ports/store.js";
import { sharedDataFile } from "../test/helpers/shared-data.js";
import { randomOf, syntheticMatchedTrips } from "./lib/synthetic.js";
import { boxPolygon } from "../src/shared/geometry.js";

export const EXTRACT = "osm-extracts/liechtenstein-2013-08-03.osm.pbf";
export const COUNTRY = "li";
const MONTH_START = Date.parse("2025-03-01T00:00:00+01:00");
const MONTH_MS = 31 * 86_400_000;
/** Routes drawn from one shortest-path tree before the next source is picked. */
const ROUTES_PER_TREE = 200;
const APPEND_BATCH = 20_000;

export default async function analysisBench(args: string[]): Promise<Record<string, unknown>> {
  const [tripCount = 1_000_000, zoneCount = 1000] = args.slice(0, 2).map(Number);
  const analysisType = args[2] ?? "OD_Analysis";
  const extraFields = args[3] ? (JSON.parse(args[3]) as Record<string, unknown>) : {};
  const file = sharedDataFile(EXTRACT);
  if (!file) return { skipped: `shared data absent: ${EXTRACT}` };
  const network = new Network(COUNTRY, await readOsmSegments(file));
  const storeFile = join(tmpdir(), `streetflow-bench-analysis-${tripCount}.sqlite`);
  const setupStarted = performance.now();
  const store = await openTripStore(storeFile, network, tripCount);
  // Replaced on every run (a second or so): the trip cache predates the presets, and it keeps them current.
  await store.presetAreas.replaceCountry(COUNTRY, presetAreasOf(COUNTRY, await readAdminAreas(file)));
  const setupS = (performance.now() - setupStarted) / 1000;
  const setupPeakRssMB = peakRssMB();
  try {
    const networks = storeNetworks(store.network);
    const { spec } = await defineAnalysis(store, networks, network, zoneCount, analysisType, extraFields);
    const load = loadavg();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const metrics = await computeAnalysis(spec, { store, networks, onProgress: () => {} });
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    return {
      network: `${EXTRACT}, ${network.size} segments`,
      trips: await store.trips.countTrips(COUNTRY),
      zones: zoneCount,
      analysisType,
      ...(args[3] && { extraFields }),
      setupS: Number(setupS.toFixed(1)),
      seconds: Number(seconds.toFixed(2)),
      cpuSeconds: Number(cpuSeconds.toFixed(2)),
      tripsPerSecond: Math.round(tripCount / seconds),
      // The type's main metrics: od_all, od_mf_all, sa_all, aadt_all, tr_od_all, tr_za_all, np_all,
      // za_all, home_<places>_all, work_<places>_all (places: grid or a preset geography).
      rows: Object.fromEntries(
        Object.entries(metrics)
          .filter(([name]) => /^(od|od_mf|sa|aadt|tr_od|tr_za|np|za|home_\w+|work_\w+)_all$/.test(name))
          .map(([name, csv]) => [name, csv.split("\n").length - 2]),
      ),
      csvMB: Number((Object.values(metrics).reduce((n, csv) => n + csv.length, 0) / 1e6).toFixed(1)),
      // Same data and code → same digest: checks that a speed-up did not change the results.
      metricsSha1: digestOf(metrics),
      rssMB: Math.round(process.memoryUsage().rss / 1e6),
      // Peak over the whole process, not only what is left at the end. A run that built the store peaked
      // there (`setupPeakRssMB` as high): the analysis's own peak then shows only in the next run.
      peakRssMB: peakRssMB(),
      setupPeakRssMB,
      loadAvg1m: Number(load[0].toFixed(2)),
    };
  } finally {
    await store.close();
  }
}

/** The process's peak resident memory so far (maxRSS is in KiB). */
function peakRssMB(): number {
  return Math.round((process.resourceUsage().maxRSS * 1024) / 1e6);
}

function digestOf(metrics: Record<string, string>): string {
  const hash = createHash("sha1");
  for (const name of Object.keys(metrics).sort()) hash.update(name).update(metrics[name]);
  return hash.digest("hex").slice(0, 12);
}

/** The cached store of `tripCount` trips, built when absent (or incomplete). */
export async function openTripStore(file: string, network: Network, tripCount: number): Promise<SqliteStore> {
  if (existsSync(file)) {
    const store = new SqliteStore(file);
    if ((await store.trips.countTrips(COUNTRY)) === tripCount) return store;
    await store.close();
    rmSync(file, { force: true });
  }
  const store = new SqliteStore(file);
  const info = { country: COUNTRY, source: EXTRACT, segmentCount: network.size, importedAt: "" };
  await store.network.replaceCountry(info, network.segments);
  let batch: MatchedTrip[] = [];
  for (const trip of syntheticTrips(network, tripCount, 11)) {
    batch.push(trip);
    if (batch.length === APPEND_BATCH) {
      await store.trips.appendTrips(COUNTRY, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.trips.appendTrips(COUNTRY, batch);
  return store;
}

/** Fastest car paths between random junctions, as if matched: 85 % personal, 10 % medium, 5 % heavy commercial. */
function syntheticTrips(network: Network, count: number, seed: number): Generator<MatchedTrip> {
  return syntheticMatchedTrips(network, count, randomOf(seed), {
    startFrom: MONTH_START,
    startSpanMs: MONTH_MS,
    routesPerTree: ROUTES_PER_TREE,
    classCuts: [0.85, 0.95],
    deviceOf: (n) => `device-${n % 50_000}`,
  });
}

/** What each catalogue type analyses besides the common fields (see the header comment). */
const TYPE_FIELDS: Record<string, Record<string, unknown>> = {
  OD_Analysis: { oz_sets: [{ name: "Grid" }], dz_sets: [{ name: "Grid" }] },
  OD_MF_Analysis: { oz_sets: [{ name: "Grid" }], mf_sets: [{ name: "Passes" }], dz_sets: [{ name: "Grid" }] },
  Segment_Analysis: { oz_sets: [{ name: "Passes" }] },
  AADT: { oz_sets: [{ name: "Passes" }], az_sets: [{ name: "Passes" }], aadt_year: 2025 },
  Top_Routes_OD: { oz_sets: [{ name: "Grid" }], dz_sets: [{ name: "Grid" }] },
  Top_Routes_ZA: { oz_sets: [{ name: "Grid" }] },
  Zone_Activity_Analysis: { oz_sets: [{ name: "Grid" }] },
  Network_Performance: { oz_sets: [{ name: "Roads" }] },
  Network_OD: { oz_sets: [{ name: "Roads" }], dz_sets: [{ name: "Roads" }] },
  // Liechtenstein's 11 communes.
  OD_Preset_Geography: { oz_sets: [{ name: "Grid" }], geography_type: "admin_8" },
};

/** Up to `count` OSM ways of the main road classes, lowest way ids first: the network types' line zones. */
function mainRoadWays(network: Network, count: number): number[] {
  const main = new Set(["motorway", "trunk", "primary", "secondary", "tertiary"]);
  const ways = new Set(network.segments.filter((s) => main.has(s.roadClass)).map((s) => s.wayId));
  return [...ways].sort((a, b) => a - b).slice(0, count);
}

/** An organization, its grid zone set (and the grid's pass-through cells) and a vendor-style all-vehicles analysis of March 2025. */
export async function defineAnalysis(
  store: Store,
  networks: NetworkRegistry,
  network: Network,
  zoneCount: number,
  analysisType: string,
  extraFields: Record<string, unknown> = {},
) {
  const fields = TYPE_FIELDS[analysisType];
  if (!fields) throw new Error(`no bench for ${analysisType}; one of ${Object.keys(TYPE_FIELDS).join(", ")}`);
  const org = await store.accounts.createOrganization(`bench-${crypto.randomUUID()}`);
  const email = `bench-${org.id}@example.org`;
  await store.accounts.addUser(email, org.id);
  const ctx = { store, networks, orgId: org.id };
  await createZoneSet(
    {
      insight_login_email: email,
      zone_set_name: "Grid",
      zones: { type: "FeatureCollection", features: gridZones(network, zoneCount) },
    },
    ctx,
  );
  await createZoneSet(
    {
      insight_login_email: email,
      zone_set_name: "Passes",
      zones: {
        type: "FeatureCollection",
        features: gridZones(network, zoneCount).filter((z) => z.properties.is_pass === 1),
      },
    },
    ctx,
  );
  if (analysisType.startsWith("Network_"))
    await createZoneSet(
      { insight_login_email: email, zone_set_name: "Roads", osm_ids: mainRoadWays(network, zoneCount) },
      ctx,
    );
  const spec = await validateAnalysisRequest(
    {
      insight_login_email: email,
      analysis_name: `Bench ${analysisType}`,
      analysis_type: analysisType,
      travel_mode_type: "All_Vehicles",
      output_type: "index",
      ...fields,
      date_ranges: [{ start_date: "03/01/2025", end_date: "03/31/2025" }],
      day_types: "Average Day|17,Average Weekday|15,Average Weekend|67",
      day_parts: "All Day|0023,Early AM|0005,Peak AM|0609,Mid-Day|1014,Peak PM|1518,Late PM|1923",
      country: COUNTRY,
      ...extraFields,
    },
    ctx,
  );
  return { spec };
}

/** `count` rectangles tiling the network's bounding box (columns × rows ≈ count); every 100th is pass-through. */
function gridZones(network: Network, count: number) {
  let [w, s, e, n] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const seg of network.segments) {
    for (const [lon, lat] of seg.coords) {
      w = Math.min(w, lon);
      e = Math.max(e, lon);
      s = Math.min(s, lat);
      n = Math.max(n, lat);
    }
  }
  const cols = Math.ceil(Math.sqrt(count));
  const rows = Math.ceil(count / cols);
  const dx = (e - w) / cols;
  const dy = (n - s) / rows;
  return Array.from({ length: count }, (_, i) => {
    const x0 = w + (i % cols) * dx;
    const y0 = s + Math.floor(i / cols) * dy;
    return {
      type: "Feature",
      properties: { name: `Cell ${i + 1}`, id: i + 1, is_pass: i % 100 === 0 ? 1 : 0 },
      geometry: boxPolygon([x0, y0, x0 + dx, y0 + dy]),
    };
  });
}
