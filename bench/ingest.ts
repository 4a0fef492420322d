/**
 * Whole ingest against the matcher alone:
 * `npm run bench -- ingest [trips=4000] [samplingS=30] [threads=2] [rounds=5] [files=1]`.
 * Simulated lbs traces on the bundled Monaco network are written as one CSV, or as `files` CSVs of
 * consecutive days of the month (as daily exports come; a trip over midnight between two files is two
 * trips, the same ones in every run); then, in one process,
 * side by side: the matcher alone on the same raw trips (read and split beforehand), the whole ingest
 * (read, split, match, store, tallies) on one thread, and the whole ingest with matching on `threads`
 * worker threads. Every run is preceded by an untimed one (V8 compiled, route balls filled, workers
 * started), so the figures compare steady states; each ingest goes into a fresh SQLite file. The matcher
 * alone and the ingest both see traces the matcher has matched before (its caches equally warm), and
 * both count the same points. Then `rounds` rounds of the matcher alone, the ingest on one thread and on
 * `threads` threads, so that load which comes and goes hits all alike: points per CPU second (the per-core
 * figure), `ingestShareOfMatcher`, the median of the rounds' ratios of the matcher's CPU time to the
 * ingest's (taken apart by `matcherCallsInsideOverAlone`, the matcher's calls inside the ingest against
 * alone, and `ingestCpuBesidesMatcherS`, the rest of the ingest's CPU), and `wallSpeedup`, the plain
 * wall-time ratio of 1 thread to `threads` threads per round, to be read on an otherwise idle machine; `wallSpeedupBound` is the most it can be on this machine's idle cores,
 * from CPU times (readable on a loaded machine too). `matcherOnly.wallSpeedup` is the same ratio for the
 * matcher alone, the file's raw trips matched on this thread and on the pool's workers in the pipeline's
 * groups: what the ingest's could reach if nothing but matching had to happen (`wallSpeedup.ofMatcherOnPool`,
 * the median of the rounds' ratios of the two). `storeS` is the wall time of
 * the store's transactions; `parallel.tailS` the wall time from the last group the workers matched to the
 * end (they are idle for it: what keeps `wallSpeedup` under 2). `wallSpeedup.withNoIdleCore`, `idleCoreS` and
 * `idleCoreSAllowedAt1_8` give the 2-thread run's budget: the ratio were its CPU spread over every core with none
 * idle, the core-seconds it left idle, and how many a 1.8x ratio allows (docs/performance.md, issue 16).
 * Every round must store exactly the trips and per-segment tallies of the first.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { threadCpuNs } from "./lib/thread-cpu.js";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { readTraceFile } from "../src/engine/ingest/read-traces.js";
import { MatchPool } from "../src/engine/ingest/match-pool.js";
import { GROUP_TRIPS } from "../src/engine/ingest/groups.js";
import { TripSplitter } from "../src/engine/ingest/split-trips.js";
import { tripMatcher } from "../src/engine/matching/index.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { NetworkRegistry } from "../src/engine/network/registry.js";
import type { Segment } from "../src/engine/network/types.js";
import type { Network } from "../src/engine/network/network.js";
import { Simulation } from "../src/engine/simulate/index.js";
import { writeSimulation } from "../src/engine/simulate/writers.js";
import type { RawTrip } from "../src/engine/trips/types.js";
import type { AppContext } from "../src/app/context.js";
import { ingestFiles } from "../src/app/ingest.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { mergedPackedRows } from "../src/store/sqlite/counts.js";
import { inDayFiles } from "./lib/day-files.js";
import { MONACO_PBF } from "../test/helpers/bundled-data.js";

export default async function ingestBench(args: string[]): Promise<Record<string, unknown>> {
  const [trips = 4000, samplingS = 30, threads = 2, rounds = 5, files = 1] = args.map(Number);
  const dir = mkdtempSync(join(tmpdir(), "sf-bench-ingest-"));
  try {
    const { segments, rt0, network, written, paths, rawByFile } = await benchMonth(
      dir,
      trips,
      samplingS,
      files,
    );
    const raw = rawByFile.flat();
    const points = raw.reduce((n, t) => n + t.points.length, 0);

    // The matcher's calls timed, alone and inside the single-thread ingest: whether the ingest's other work
    // slows the matching itself (its caches, the collector) or only adds to it.
    const matchCalls = { s: 0 };
    const matchTrip = tripMatcher(network);
    const match: typeof matchTrip = (trip) => {
      const started = performance.now();
      try {
        return matchTrip(trip);
      } finally {
        matchCalls.s += (performance.now() - started) / 1000;
      }
    };
    raw.forEach(match);
    const matchAlone = () => measured(async () => raw.forEach(match));

    // Kept across the parallel runs, so the measured ones have warm workers like the single thread.
    const pool = new MatchPool(network, threads);
    const groups = Array.from({ length: Math.ceil(raw.length / GROUP_TRIPS) }, (_, g) =>
      raw.slice(g * GROUP_TRIPS, (g + 1) * GROUP_TRIPS),
    );
    const matchOnPool = () => measured(async () => void (await Promise.all(groups.map(pool.match))));
    let run = 0;
    const ingestOnce = async (parallel: boolean) => {
      // A fresh store, the warm network: its matching caches are those of a long-running ingest.
      const rt = {
        ...(await runtimeWith(join(dir, `ingest-${run++}.sqlite`), segments)),
        networks: rt0.networks,
      };
      const store = timedTransactions(rt.store);
      const matching = parallel ? lastResultTimed(pool) : undefined;
      const timed = await measured(() =>
        ingestFiles(rt, paths, {
          country: "mc",
          source: "lbs",
          vehicleClass: "personal",
          matcher: match,
          matchPool: matching,
        }),
      );
      const ended = process.hrtime.bigint();
      const tailS = matching ? Number(ended - matching.lastResultAt) / 1e9 : 0;
      const digest = await storedDigest(rt);
      const talliesDigest = storedTalliesDigest(rt.store as SqliteStore);
      await rt.store.close();
      return { ...timed, report: timed.value, storeS: store.seconds, tailS, digest, talliesDigest };
    };
    await ingestOnce(false);
    await ingestOnce(true);
    await matchOnPool();
    const alone: Awaited<ReturnType<typeof matchAlone>>[] = [];
    const onPool: typeof alone = [];
    const singles: Awaited<ReturnType<typeof ingestOnce>>[] = [];
    const parallels: typeof singles = [];
    // The matcher alone in every round too: on a machine whose speed drifts, a ratio is only as good as
    // the two figures measured side by side.
    const callsAloneS: number[] = [];
    const callsInsideS: number[] = [];
    const callsOf = async <T>(run: () => Promise<T>, into: number[]): Promise<T> => {
      matchCalls.s = 0;
      const out = await run();
      into.push(matchCalls.s);
      return out;
    };
    for (let r = 0; r < rounds; r++) {
      alone.push(await callsOf(matchAlone, callsAloneS));
      onPool.push(await matchOnPool());
      singles.push(await callsOf(() => ingestOnce(false), callsInsideS));
      parallels.push(await ingestOnce(true));
    }
    await pool.close();

    const perCpuS = (m: { cpuS: number }) => Math.round(points / m.cpuS);
    // The round of median CPU time stands for each kind; the ratios are per round.
    const matcherOnly = medianBy(alone, (m) => m.cpuS);
    const single = medianBy(singles, (m) => m.cpuS);
    const parallel = medianBy(parallels, (m) => m.cpuS);
    const shares = singles.map((m, r) => round(alone[r].cpuS / m.cpuS));
    const wallRatios = singles.map((m, r) => round(m.wallS / parallels[r].wallS));
    const poolRatios = alone.map((m, r) => round(m.wallS / onPool[r].wallS));
    const cores = availableParallelism();
    // Core-seconds no thread of the parallel run used: its wall time on every core, less its CPU time.
    const idleCoreS = parallels.map((m) => m.wallS * cores - m.cpuS);
    const first = singles[0];
    return {
      network: `Monaco, ${segments.length} segments`,
      file: `${written.trips} simulated lbs trips, ${written.points} points, ${samplingS} s sampling`,
      files: paths.length,
      rawTrips: raw.length,
      points,
      matcherOnly: {
        cpuS: round(matcherOnly.cpuS),
        pointsPerCpuS: perCpuS(matcherOnly),
        wallSpeedup: median(poolRatios),
        wallSpeedupPerRound: poolRatios,
      },
      ingest: {
        cpuS: round(single.cpuS),
        wallS: round(single.wallS),
        mainThreadCpuS: round(single.mainThreadCpuS),
        otherThreadsCpuS: round(single.cpuS - single.mainThreadCpuS),
        pointsPerCpuS: perCpuS(single),
        storeS: round(single.storeS),
        stored: single.report.totals.stored,
      },
      ingestShareOfMatcher: median(shares),
      sharePerRound: shares,
      // The share taken apart (medians of the rounds): the matcher's calls inside the ingest against the same
      // calls alone (wall time of the calls, collections in them included), and the ingest's CPU besides them.
      matcherCallsInsideOverAlone: median(callsInsideS.map((s, r) => round(s / callsAloneS[r]))),
      ingestCpuBesidesMatcherS: round(median(singles.map((m, r) => m.cpuS - callsInsideS[r]))),
      parallel: {
        threads,
        cpuS: round(parallel.cpuS),
        wallS: round(parallel.wallS),
        mainThreadCpuS: round(parallel.mainThreadCpuS),
        busiestOtherThreadCpuS: round(parallel.busiestOtherThreadCpuS),
        storeS: round(parallel.storeS),
        // From the last group matched to the end: the workers idle, this thread storing the last batch.
        tailS: round(parallel.tailS),
        stored: parallel.report.totals.stored,
      },
      wallSpeedup: {
        threads: `1 -> ${threads}`,
        median: median(wallRatios),
        perRound: wallRatios,
        // Against matching alone on the same pool in the same round: how near the ingest comes to the
        // speed-up the matching itself reaches on these cores.
        ofMatcherOnPool: median(wallRatios.map((w, r) => round(w / poolRatios[r]))),
        // The run's budget (on an otherwise idle machine): what the ratio would be were no core ever idle in
        // the parallel run (its CPU spread over every core; the single thread's collector already uses a
        // second core, so this is under `cores`), the core-seconds it did leave idle, and the most it may
        // leave idle for a 1.8x ratio.
        withNoIdleCore: median(singles.map((m, r) => round((m.wallS * cores) / parallels[r].cpuS))),
        idleCoreS: round(median(idleCoreS)),
        idleCoreSAllowedAt1_8: round(
          median(singles.map((m, r) => (m.wallS * cores) / 1.8 - parallels[r].cpuS)),
        ),
        wallS1: singles.map((m) => round(m.wallS)),
        [`wallS${threads}`]: parallels.map((m) => round(m.wallS)),
      },
      // The most `wallSpeedup` can be on this machine's idle cores: the parallel run's work (the CPU of all
      // its threads) spread over every core but for its serial tail, never less than its busiest thread;
      // against the single-threaded run's critical path, its main thread (its collector's helper threads
      // run beside it on an idle core).
      wallSpeedupBound: round(single.mainThreadCpuS / parallelWallBound(parallel, cores)),
      sameTripsStored: [...singles, ...parallels].every((m) => m.digest === first.digest),
      sameTalliesStored: [...singles, ...parallels].every((m) => m.talliesDigest === first.talliesDigest),
      tripsSha1: first.digest.slice(0, 12),
      talliesSha1: first.talliesDigest.slice(0, 12),
      loadAvg1m: round(loadavg()[0]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What an ingest bench starts from, in `dir`: Monaco's segments and a store holding them (`rt0`, whose network
 * registry the ingests share), the bench's trace file as `files` daily files, and their raw trips per file.
 */
export async function benchMonth(dir: string, trips: number, samplingS: number, files: number) {
  const segments = await readOsmSegments(MONACO_PBF);
  const rt0 = await runtimeWith(join(dir, "setup.sqlite"), segments);
  const network = (await rt0.networks.get("mc"))!;
  const written = benchTraceFile(network, trips, samplingS, join(dir, "traces"));
  const paths = inDayFiles(written.months[0].traces, files);
  const rawByFile = await Promise.all(paths.map(splitTrips));
  return { segments, rt0, network, written, paths, rawByFile };
}

/** The bench's trace file: the first `trips` simulated lbs trips of March 2025 on `network`, one CSV in `dir`. */
export function benchTraceFile(network: Network, trips: number, samplingS: number, dir: string) {
  const sim = new Simulation(network, {
    from: "2025-03",
    to: "2025-03",
    tripsPerDay: Math.max(10, Math.ceil(trips / 31)),
    seed: 7,
    source: "lbs",
    samplingS,
    noiseM: 10,
  });
  return writeSimulation(firstTrips(sim.trips(), trips), dir);
}

/**
 * The trace file again, each device id replaced by a UUID made from it (as the advertising ids of real lbs
 * exports are): 36 characters where the simulator writes 11. Written beside `path`; answers its path.
 */
export function withUuidDeviceIds(path: string): string {
  const uuidOf = (id: string) => {
    const h = createHash("md5").update(id).digest("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const [header, ...rows] = readFileSync(path, "utf8").split("\n");
  const out = rows.map((row) => {
    const comma = row.indexOf(",");
    return row === "" ? row : uuidOf(row.slice(0, comma)) + row.slice(comma);
  });
  const uuids = path.replace(/\.csv$/, "-uuid.csv");
  writeFileSync(uuids, [header, ...out].join("\n"));
  return uuids;
}

export async function runtimeWith(path: string, segments: Segment[]): Promise<AppContext> {
  const store = new SqliteStore(path);
  await store.network.replaceCountry(
    { country: "mc", source: "bench", segmentCount: segments.length, importedAt: new Date().toISOString() },
    segments,
  );
  return {
    store,
    networks: new NetworkRegistry(async (c) => await store.network.loadSegments(c)),
  };
}

function* firstTrips<T>(trips: Iterable<T>, n: number): Iterable<T> {
  let i = 0;
  for (const trip of trips) {
    if (i++ >= n) return;
    yield trip;
  }
}

/** The file's raw trips as the ingest's splitter makes them. */
export async function splitTrips(file: string): Promise<RawTrip[]> {
  const splitter = new TripSplitter({ source: "lbs", defaultVehicleClass: "personal" });
  const out: RawTrip[] = [];
  for await (const records of readTraceFile(file))
    for (const record of records) if (!record.problem) out.push(...splitter.push(record.point));
  out.push(...splitter.flush());
  return out;
}

/** The store's transactions timed (wall seconds, summed), for the share of an ingest spent storing. */
export function timedTransactions(store: AppContext["store"]): { seconds: number } {
  const total = { seconds: 0 };
  const transaction = store.transaction.bind(store);
  store.transaction = async (fn) => {
    const started = process.hrtime.bigint();
    try {
      return await transaction(fn);
    } finally {
      total.seconds += Number(process.hrtime.bigint() - started) / 1e9;
    }
  };
  return total;
}

/** The pool's matching, noting when the last group's outcomes came back. */
function lastResultTimed(pool: MatchPool): Pick<MatchPool, "match" | "handAhead"> & { lastResultAt: bigint } {
  const timed = {
    lastResultAt: process.hrtime.bigint(),
    handAhead: pool.handAhead,
    match: async (trips: RawTrip[]) => {
      const outcomes = await pool.match(trips);
      timed.lastResultAt = process.hrtime.bigint();
      return outcomes;
    },
  };
  return timed;
}

/** SHA-1 over every stored trip of the country, in storage order. */
export async function storedDigest(rt: AppContext): Promise<string> {
  const hash = createHash("sha1");
  for await (const trip of rt.store.trips.scan("mc", {})) hash.update(JSON.stringify(trip));
  return hash.digest("hex");
}

/** SHA-1 over every packed tally row of the country (totals, details, year rollups), in key order. */
export function storedTalliesDigest(store: SqliteStore): string {
  const hash = createHash("sha1");
  // Each segment-period's parts merged: the digest of what is stored, however the batches fell.
  for (const table of ["segment_month_totals", "segment_month_details", "segment_year_rollups"] as const)
    for (const [country, segmentId, when, cells] of mergedPackedRows(store.db, table))
      if (country === "mc") hash.update(`${table}|${segmentId}|${when}|`).update(cells);
  return hash.digest("hex");
}

interface Measured<T> {
  value: T;
  /** CPU seconds of the whole process (every thread). */
  cpuS: number;
  wallS: number;
  /** CPU seconds of this (main) thread and of the busiest other thread (Linux; 0 elsewhere). */
  mainThreadCpuS: number;
  busiestOtherThreadCpuS: number;
}

export async function measured<T>(run: () => Promise<T>): Promise<Measured<T>> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const threadsBefore = threadCpuS();
  const value = await run();
  const used = process.cpuUsage(cpu);
  const threadsAfter = threadCpuS();
  const spent = [...threadsAfter].map(([tid, s]) => [tid, s - (threadsBefore.get(tid) ?? 0)] as const);
  return {
    value,
    cpuS: (used.user + used.system) / 1e6,
    wallS: Number(process.hrtime.bigint() - started) / 1e9,
    mainThreadCpuS: spent.find(([tid]) => tid === process.pid)?.[1] ?? 0,
    busiestOtherThreadCpuS: Math.max(0, ...spent.filter(([tid]) => tid !== process.pid).map(([, s]) => s)),
  };
}

/**
 * CPU seconds per thread of this process, so the parallel run's critical path can be told apart from its
 * total on a loaded machine.
 */
function threadCpuS(): Map<number, number> {
  return new Map([...threadCpuNs()].map(([tid, ns]) => [tid, ns / 1e9]));
}

export const round = (x: number) => Number(x.toFixed(2));

export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2);
}

/**
 * The shortest wall time a parallel run's measured work allows on `cores` idle cores: its CPU time less the
 * tail (one thread storing the last batch while the workers idle) spread over all of them, then the tail.
 */
function parallelWallBound(run: Measured<unknown> & { tailS: number }, cores: number): number {
  const spread = (run.cpuS - run.tailS) / cores + run.tailS;
  return Math.max(spread, run.mainThreadCpuS, run.busiestOtherThreadCpuS);
}

/** The item whose `by` is the median (the lower middle one of an even count). */
function medianBy<T>(items: T[], by: (item: T) => number): T {
  return [...items].sort((a, b) => by(a) - by(b))[(items.length - 1) >> 1];
}
