/**
 * Segment counts latency: `npm run bench -- counts [requests=20] [grid] [segments=N] [shape=S] [path=P]`.
 * The Liechtenstein extract (the largest in the shared data) with per-segment aggregates
 * filled for every segment × month (all of 2025) × day of week × hour (one direction, class
 * and source per cell; cached in the OS temp dir), served by the real app over Fastify
 * `inject`. For radius selectors sized to ~100, ~1,000 and all car segments (the network has
 * fewer than 10,000), reports p50/p99 of POST /counts/v1/metrics for one month and for the
 * whole year (the first page is answered, every row computed and kept for paging), each served from
 * the whole-month rollups and, side by side in the same run, by summing the months' cells; the
 * process CPU time per request (steadier than wall time on a shared machine), and where the time
 * goes: selection (POST /segmentcount, same body), the store query (the store's reads of the segment sums,
 * timed inside the request; before 2026-11-28 afternoon it was the whole provider, sums included) and the
 * rest (metrics maths, validation, JSON, metering, paging). The tail's causes, steadier
 * than p99 under load: bytes allocated per request and V8's GC pauses (count, total and longest ms)
 * over the measured requests; and `responsesSha1`, a digest of every measured answer with its random
 * request id left out, which a change of the serving code must leave as it was.
 * No shared extract has 10,000 car segments, so `grid` runs the same on a synthetic 101 × 101 street grid
 * (20,200 segments) for radii of ~100, ~1,000 and ~10,000 segments.
 * `phases` adds, per size, where the time of the slowest requests went (bench/lib/request-phases.ts):
 * the store's reads, the quota look-ups, storing the later pages, the charge, the COMMIT, GC pauses, and
 * how much the WAL grew. `synchronous=off`, an experiment: the bench's connection without any fsync (what the
 * checkpoints' syncs cost the tail).
 */
import { createHash, type Hash } from "node:crypto";
import { existsSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { GCProfiler, getHeapStatistics } from "node:v8";
import { buildApp } from "../src/api/app.js";
import { collectGarbage } from "./lib/collect-garbage.js";
import { issueApiKey } from "../src/app/accounts.js";
import { inlineRunner } from "../src/app/heavy/tasks.js";
import { columnsOfStats } from "../src/engine/counts/segment-stats.js";
import { Network } from "../src/engine/network/network.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { storeNetworks } from "../src/app/networks.js";
import { ACCESS_CAR, type LonLat, type Segment } from "../src/engine/network/types.js";
import { MIGRATIONS } from "../src/store/sqlite/migrations.js";
import { SqliteSegmentStats } from "../src/store/sqlite/counts.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { SegmentStatsRepo } from "../src/app/ports/store.js";
import type { SegmentStatCell } from "../src/engine/counts/segment-stats.js";
import { gridNetwork } from "../test/helpers/grid-network.js";
import { sharedDataFile } from "../test/helpers/shared-data.js";
import { randomOf } from "./lib/synthetic.js";
import { labelNewThreads, PhaseTimer } from "./lib/request-phases.js";

const EXTRACT = "osm-extracts/liechtenstein-2013-08-03.osm.pbf";
/** A whole year, so both request shapes are served: one month (`{year, month}`) and the year (`{year}`). */
const MONTHS = Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, "0")}`);
const SHAPES = { month: { year: 2025, month: 1 }, year: { year: 2025 } } as const;
type Shape = keyof typeof SHAPES;
const PATHS = ["rollups", "cells"] as const;
type Path = (typeof PATHS)[number];
const FIELDS = ["segment_id", "year_month", "trips_volume", "trips_sample_count", "vmt", "avg_speed"];

/** Where the segments come from: the real extract, or the synthetic grid for the 10,000-segment case. */
interface Source {
  name: string;
  country: string;
  targets: number[];
  segments: () => Promise<Segment[] | null>;
}

const EXTRACT_SOURCE: Source = {
  name: EXTRACT,
  country: "li",
  targets: [100, 1000, Infinity],
  segments: async () => {
    const file = sharedDataFile(EXTRACT);
    return file ? readOsmSegments(file) : null;
  },
};

const GRID_SOURCE: Source = {
  name: "synthetic 101 × 101 grid",
  country: "gg",
  targets: [100, 1000, 10_000],
  segments: async () => gridNetwork({ size: 101, spacingM: 100 }).segments,
};

/** The country of the run's source; set once at the start of a run (the request bodies name it). */
let COUNTRY = EXTRACT_SOURCE.country;

export default async function countsBench(args: string[]): Promise<Record<string, unknown>> {
  const requests = Number(args.find((a) => /^\d+$/.test(a)) ?? 20);
  // `phases`: the threads named by the set-up step that brought them (V8's and libuv's at start).
  const threads = new Map<number, string>();
  labelNewThreads(threads, "start");
  const source = args.includes("grid") ? GRID_SOURCE : EXTRACT_SOURCE;
  COUNTRY = source.country;
  const segments = await source.segments();
  if (!segments) return { skipped: `shared data absent: ${EXTRACT}` };
  const network = new Network(COUNTRY, segments);
  const store = await openStatsStore(cacheFileOf(COUNTRY), network, source.name);
  labelNewThreads(threads, "store");
  // `synchronous=off`: no fsync at all (an experiment: what the checkpoints' fsyncs cost the tail).
  if (args.includes("synchronous=off")) store.db.pragma("synchronous = OFF");
  const networks = storeNetworks(store.network);
  // With the trip tallies the route reads too, so the figures are the served request's.
  // Each shape is served both ways in the same run: from the whole-month rollups where they apply
  // (what the route does), and by summing the months' cells (the path before them).
  const cellsOnly = new SqliteSegmentStats(store.db);
  let path: Path = "rollups";
  const timer = { lastMs: 0 };
  // `phases`: the request under way's phase timer (one per size measured), null otherwise.
  const probe: Probe = { phases: args.includes("phases") ? newPhaseTimer(store, threads) : null };
  const timed = async <T>(read: () => T | Promise<T>): Promise<T> => {
    const started = performance.now();
    const out = await read();
    const took = performance.now() - started;
    timer.lastMs += took;
    if (probe.phases) probe.phases.add("store", took);
    return out;
  };
  const stats: SegmentStatsRepo = {
    add: async (country, cells) => await store.segmentStats.add(country, cells),
    addBatch: async (country, batch) => await store.segmentStats.addBatch(country, batch),
    compact: async (country) => await store.segmentStats.compact(country),
    query: (q) => timed(() => (path === "cells" ? cellsOnly.queryCells(q) : store.segmentStats.query(q))),
    totals: (q) =>
      timed(() =>
        path === "cells"
          ? columnsOfStats(cellsOnly.queryCells({ ...q, details: false }), q.months)
          : store.segmentStats.totals(q),
      ),
  };
  // The route's own path (the counts use case over the store's columns), the store's reads timed: the
  // store is the real one but for its segment counts.
  const served = Object.create(store, { segmentStats: { value: stats } }) as SqliteStore;
  if (probe.phases) timeWrites(store, probe);
  // A load test: the per-key rate limit would refuse the bench's own requests.
  const app = await buildApp({
    store,
    networks,
    heavy: inlineRunner({ store: served, networks }),
    security: { rateLimits: { perKey: 1e9 } },
  });
  labelNewThreads(threads, "app");
  const org = await store.accounts.createOrganization(`bench-${crypto.randomUUID()}`);
  try {
    const key = (await issueApiKey(store, org.id)).key;
    const post = (path: string, body: object) =>
      app.inject({
        method: "POST",
        url: `/counts/v1/${path}`,
        headers: { "x-service-key": key },
        payload: body,
      });
    const centre = centreOf(network);
    const carSegments = network.segments.filter((s) => (s.access & ACCESS_CAR) !== 0).length;
    const load = loadavg();
    const cpu = process.cpuUsage();
    const sizes = [];
    const digest = createHash("sha1");
    // `segments=N`: only that selection size (profiling one shape).
    const only = args.find((a) => a.startsWith("segments="));
    const targets = only ? [Number(only.slice("segments=".length))] : source.targets;
    // `shape=month|year`, `path=rollups|cells`: only that shape or path (profiling).
    const pick = <T extends string>(name: string, all: readonly T[]) => {
      const arg = args.find((a) => a.startsWith(`${name}=`));
      return arg ? all.filter((v) => v === arg.slice(name.length + 1)) : all;
    };
    for (const target of targets) {
      const bufferM = await radiusFor(post, centre, Math.min(target, carSegments));
      for (const shape of pick("shape", Object.keys(SHAPES) as Shape[]))
        for (path of pick("path", PATHS))
          sizes.push({
            path,
            ...(await measure(post, timer, centre, bufferM, requests, shape, digest, probe)),
          });
    }
    const used = process.cpuUsage(cpu);
    return {
      network: `${source.name}, ${network.size} segments (${carSegments} car-accessible)`,
      cells: network.size * MONTHS.length * 7 * 24,
      requestsPerSize: requests,
      sizes,
      responsesSha1: digest.digest("hex").slice(0, 12),
      cpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(1)),
      loadAvg1m: Number(load[0].toFixed(2)),
    };
  } finally {
    await app.close();
    forgetAnswers(store, org.id);
    await store.close();
  }
}

interface Probe {
  phases: PhaseTimer | null;
}

const newPhaseTimer = (store: SqliteStore, threads: ReadonlyMap<number, string>) =>
  new PhaseTimer(() => {
    try {
      return statSync(`${store.file}-wal`).size;
    } catch {
      return 0;
    }
  }, threads);

/**
 * `phases`: the store's quota look-ups, page writes, charges and COMMITs timed into the request under way,
 * by wrapping them on the store itself (the route reads the quota from it, the task writes through it).
 */
function timeWrites(store: SqliteStore, probe: Probe): void {
  const during =
    <A extends unknown[], R>(phase: "quota" | "pages" | "meter", fn: (...a: A) => Promise<R>) =>
    (...a: A) =>
      probe.phases ? probe.phases.timedAsync(phase, () => fn(...a)) : fn(...a);
  const { usage, countsResults } = store;
  const writable = store as { -readonly [K in keyof SqliteStore]: SqliteStore[K] };
  writable.usage = {
    ...usage,
    quotaOf: during("quota", usage.quotaOf),
    unitsOfKey: during("quota", usage.unitsOfKey),
    record: during("meter", usage.record),
  };
  writable.countsResults = { ...countsResults, save: during("pages", countsResults.save) };
  const exec = store.db.exec.bind(store.db);
  store.db.exec = (sql: string) =>
    sql === "COMMIT" && probe.phases ? probe.phases.timed("commit", () => exec(sql)) : exec(sql);
}

/**
 * The run's stored later pages and charges, dropped: kept, they grew the cached store by ~90 MB a run
 * (a year's answer stores 11 pages), and each run wrote into a larger file than the last.
 */
function forgetAnswers(store: SqliteStore, orgId: string): void {
  store.db.transaction(() => {
    store.db.prepare("DELETE FROM counts_results WHERE org_id = ?").run(orgId); // pages cascade
    store.db.prepare("DELETE FROM counts_usage WHERE org_id = ?").run(orgId);
  })();
}

/** One cache per schema version and source: opening another version's cache would migrate it under that branch's feet. */
const cacheFileOf = (country: string) =>
  join(tmpdir(), `streetflow-bench-counts-${country}-${MONTHS.length}m-schema${MIGRATIONS.length}.sqlite`);

/**
 * The Liechtenstein store of this bench (every segment × 12 months of 2025 × day of week × hour), built on
 * first use and cached in the OS temp dir; bench/scale serves it from real server processes. Null without
 * the shared data.
 */
export async function extractStatsStore(): Promise<{ file: string; network: Network } | null> {
  const segments = await EXTRACT_SOURCE.segments();
  if (!segments) return null;
  COUNTRY = EXTRACT_SOURCE.country;
  const network = new Network(COUNTRY, segments);
  const file = cacheFileOf(COUNTRY);
  await (await openStatsStore(file, network, EXTRACT_SOURCE.name)).close();
  return { file, network };
}

type Post = (path: string, body: object) => Promise<{ statusCode: number; body: string; json(): unknown }>;

/** A circle of `radiusM` metres around `centre`, as a counts request's geometry. */
export const radiusSelector = (centre: LonLat, radiusM: number) => ({
  radius: { point: { type: "point", coordinates: centre }, buffer: radiusM, unit: "m" },
});

/** A vendor-style metrics request (every field, all day, both directions) of a geometry and date. */
export const metricsRequest = (geometry: object, date: object) => ({
  geometry,
  country: COUNTRY,
  mode: "vehicle",
  fields: FIELDS,
  day_part: "all",
  day_type: "all",
  direction: "bidirectional",
  date,
  data_version: 1,
});

const metricsBody = (centre: LonLat, bufferM: number, shape: Shape = "month") =>
  metricsRequest(radiusSelector(centre, bufferM), SHAPES[shape]);

/**
 * Latencies of the metrics call for one radius, with the store part timed apart, and what the requests
 * cost the heap; then the selection alone. The loop keeps nothing but numbers (the answers are hashed as
 * they come), so the garbage and the pauses measured are the requests'.
 */
async function measure(
  post: Post,
  storeTimer: { lastMs: number },
  centre: LonLat,
  bufferM: number,
  requests: number,
  shape: Shape,
  digest: Hash,
  probe: Probe,
) {
  const body = metricsBody(centre, bufferM, shape);
  const segments = ((await post("segmentcount", body)).json() as { segment_count: number }).segment_count;
  // The old generation emptied first: a full collection of the set-up's garbage (the network read, earlier
  // sizes) would otherwise land in one window or another by chance, and say nothing of these requests.
  // Before the warm-up, not after it: a forced collection drops what the JIT learnt of the objects' shapes,
  // so the first requests after it deoptimised and recompiled (sliceRows, encodeSlice: "wrong map"), as no
  // serving process ever does, and one of them was a month's p99 (docs/performance.md, section "Stop 42").
  collectGarbage();
  let rows = 0;
  for (let i = 0; i < 5; i++) {
    const res = await post("metrics", body); // warm-up
    rows = (res.json() as { query_rows: number }).query_rows;
  }
  const total: number[] = [];
  const cpuMs: number[] = [];
  const storeMs: number[] = [];
  const phases = probe.phases ? (probe.phases = probe.phases.fresh()) : null;
  const heap = heapCost();
  for (let i = 0; i < requests; i++) {
    storeTimer.lastMs = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const res = phases ? await phases.request(() => post("metrics", body)) : await post("metrics", body);
    total.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
    storeMs.push(storeTimer.lastMs);
    if (res.statusCode !== 200) throw new Error(`metrics: ${res.statusCode} ${res.body}`);
    hashAnswer(digest, res.body);
  }
  const gc = heap.stop();
  const selection: number[] = [];
  for (let i = 0; i < requests; i++) {
    const selStarted = performance.now();
    await post("segmentcount", body);
    selection.push(performance.now() - selStarted);
  }
  return {
    shape,
    radiusM: Math.round(bufferM),
    segments,
    rows,
    p50Ms: ms(quantile(total, 0.5)),
    p99Ms: ms(quantile(total, 0.99)),
    // Process CPU time during the request: its cost without the queueing other load adds. Includes
    // V8's helper threads (concurrent GC), so a tail figure would mislead; the median does not.
    cpuP50Ms: ms(quantile(cpuMs, 0.5)),
    storeQueryP50Ms: ms(quantile(storeMs, 0.5)),
    selectionP50Ms: ms(quantile(selection, 0.5)),
    allocKbPerRequest: Math.round(gc.allocatedBytes / requests / 1024),
    gcPauses: gc.pauses,
    gcPauseMs: ms(gc.pauseMs),
    gcMaxPauseMs: ms(gc.maxPauseMs),
    gcMajor: gc.major,
    ...(phases ? { phases: phases.report() } : {}),
  };
}

/**
 * Bytes allocated on V8's heap and GC pauses from now to `stop()`: the heap's growth plus what each
 * collection freed (V8's GC profiler reports the used size before and after each, and its pause).
 */
function heapCost() {
  const profiler = new GCProfiler();
  const usedBefore = getHeapStatistics().used_heap_size;
  profiler.start();
  return {
    stop() {
      const usedAfter = getHeapStatistics().used_heap_size;
      const gcs = profiler.stop()?.statistics ?? [];
      let freed = 0;
      for (const gc of gcs)
        freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
      const pausesMs = gcs.map((gc) => gc.cost / 1000);
      return {
        allocatedBytes: usedAfter - usedBefore + freed,
        pauses: gcs.length,
        pauseMs: pausesMs.reduce((a, b) => a + b, 0),
        maxPauseMs: Math.max(0, ...pausesMs),
        // Full collections of the old generation (the rest are scavenges of the young one).
        major: gcs.filter((gc) => gc.gcType === "MarkSweepCompact").length,
      };
    },
  };
}

/** An answer into the digest without its request id (random per call), which it may name several times. */
function hashAnswer(digest: Hash, body: string): void {
  const at = body.indexOf(`"request_id":"`);
  const id = at < 0 ? "" : body.slice(at + 14, body.indexOf(`"`, at + 14));
  let from = 0;
  for (let to = id ? body.indexOf(id) : -1; to >= 0; to = body.indexOf(id, from)) {
    digest.update(body.slice(from, to));
    from = to + id.length;
  }
  digest.update(body.slice(from));
}

/** The radius (metres) whose selection holds about `target` segments. */
async function radiusFor(post: Post, centre: LonLat, target: number): Promise<number> {
  return await bisectRadius(async (radiusM) => {
    const res = await post("segmentcount", metricsBody(centre, radiusM));
    return (res.json() as { segment_count: number }).segment_count;
  }, target);
}

/** Bisects the radius (metres) whose selection holds about `target` segments; `countAt` counts one. */
export async function bisectRadius(
  countAt: (radiusM: number) => Promise<number>,
  target: number,
): Promise<number> {
  let [lo, hi] = [10, 50_000];
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    const count = await countAt(mid);
    if (count === target) return mid;
    if (count < target) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The car network's mean position: its densest part in a small country. */
export function centreOf(network: Network): LonLat {
  let [lon, lat, n] = [0, 0, 0];
  for (const s of network.segments) {
    if ((s.access & ACCESS_CAR) === 0) continue;
    lon += s.coords[0][0];
    lat += s.coords[0][1];
    n++;
  }
  return [lon / n, lat / n];
}

/** The cached store: the network and one aggregate cell per segment × month × day of week × hour. */
async function openStatsStore(file: string, network: Network, sourceName: string): Promise<SqliteStore> {
  const info = { country: COUNTRY, source: sourceName, segmentCount: network.size, importedAt: "" };
  const open = () => new SqliteStore(file);
  if (existsSync(file)) {
    const store = open();
    if ((await store.network.countries()).some((c) => c.country === COUNTRY)) return store;
    await store.close();
    rmSync(file, { force: true });
  }
  const store = open();
  const random = randomOf(5);
  for (const segment of network.segments) await store.segmentStats.add(COUNTRY, cellsOf(segment.id, random));
  // As an ingest run ends: each batch added to every month, so no batch was the first into a later month.
  await store.segmentStats.compact(COUNTRY);
  // Written last: its presence marks a complete cache.
  await store.network.replaceCountry(info, network.segments);
  return store;
}

function cellsOf(segmentId: number, random: () => number): SegmentStatCell[] {
  const cells: SegmentStatCell[] = [];
  for (const month of MONTHS) {
    for (let dayOfWeek = 1; dayOfWeek <= 7; dayOfWeek++) {
      for (let hour = 0; hour < 24; hour++) {
        const trips = 1 + Math.floor(random() * 20);
        const speed = 20 + random() * 40;
        const histogram = new Array<number>(12).fill(0);
        histogram[Math.floor(speed / 5)] = trips;
        cells.push({
          segmentId,
          month,
          dayOfWeek,
          hour,
          direction: random() < 0.5 ? "with" : "against",
          vehicleClass: "personal",
          source: "lbs",
          trips,
          speedSumKph: speed * trips,
          speedCount: trips,
          speedHistogram: histogram,
          purposes: { hbw: Math.floor(trips / 2), hbo: trips - Math.floor(trips / 2) },
          incomes: { "3": trips },
        });
      }
    }
  }
  return cells;
}

/** The `q` quantile (lower nearest rank) of `values`; NaN for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const ms = (x: number) => Number(x.toFixed(1));
