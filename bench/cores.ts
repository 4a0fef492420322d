/**
 * What a second core gives on this machine, whatever the code: `npm run bench -- cores [seconds=5] [rounds=3]`.
 * Each workload runs for `seconds` in one process, then in two processes at once (no shared heap, no thread
 * of ours between them), and `twoOverOne` is the work the two did together over the work the one did alone
 * (the median over `rounds`; 2 is a perfect second core). Workloads: `alu`, arithmetic in registers; `memory`,
 * reads and writes at random places of a 64 MB array; `matcher`, the bench's Monaco lbs traces (4,000 trips,
 * 30 s) matched over and over by a warm matcher, counted in points. Then `poolOverOne`: one process matching
 * the same traces on the ingest's pool of 2 workers, fed and its answers taken as an ingest does, against the
 * matcher alone on one thread. The issue-16 benches' two-thread ratios (`ingest`'s `wallSpeedup`,
 * `matcherOnly.wallSpeedup`) are read against these: `twoOverOne.matcher` is what the machine allows matching,
 * `poolOverOne` what the pool makes of it in steady state, without a run's start and end.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { tripMatcher } from "../src/engine/matching/index.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { Network } from "../src/engine/network/network.js";
import { MatchPool, type MatchOutcome } from "../src/engine/ingest/match-pool.js";
import { SegmentCellAccumulator } from "../src/engine/counts/segment-cells.js";
import { storeWorkAhead } from "../src/app/ingest.js";
import { LocalClock } from "../src/engine/time.js";
import { GROUP_TRIPS, GROUPS_IN_FLIGHT } from "../src/engine/ingest/groups.js";
import { DEFAULT_BATCH_TRIPS } from "../src/engine/ingest/pipeline.js";
import { MONACO_PBF } from "../test/helpers/bundled-data.js";
import { benchTraceFile, median, round, splitTrips } from "./ingest.js";

const WORKLOADS = ["alu", "memory", "matcher"] as const;
type Workload = (typeof WORKLOADS)[number] | "pool";

export default async function coresBench(args: string[]): Promise<Record<string, unknown>> {
  if (args[0] === "child") return await child(args[1] as Workload, Number(args[2]), args[3]);
  const [seconds = 5, rounds = 3] = args.map(Number);
  const dir = mkdtempSync(join(tmpdir(), "sf-bench-cores-"));
  try {
    const network = new Network("mc", await readOsmSegments(MONACO_PBF));
    const traces = benchTraceFile(network, 4000, 30, dir).months[0].traces;
    const ratios: Record<Workload, number[]> = { alu: [], memory: [], matcher: [], pool: [] };
    const perSecond: Record<Workload, number[]> = { alu: [], memory: [], matcher: [], pool: [] };
    for (let r = 0; r < rounds; r++)
      for (const workload of WORKLOADS) {
        const [alone] = await together(1, workload, seconds, traces);
        const two = await together(2, workload, seconds, traces);
        ratios[workload].push(round((two[0] + two[1]) / alone));
        perSecond[workload].push(Math.round(alone));
        if (workload !== "matcher") continue;
        const [pool] = await together(1, "pool", seconds, traces);
        ratios.pool.push(round(pool / alone));
        perSecond.pool.push(Math.round(pool));
      }
    return {
      seconds,
      rounds,
      twoOverOne: Object.fromEntries(WORKLOADS.map((w) => [w, median(ratios[w])])),
      poolOverOne: median(ratios.pool),
      perRound: ratios,
      aloneUnitsPerSecond: perSecond,
      units: { alu: "1e6 steps", memory: "1e6 random accesses", matcher: "points", pool: "points" },
      loadAvg1m: round(loadavg()[0]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `n` child processes set up, then started at once: the units per wall second each did. */
async function together(n: number, workload: Workload, seconds: number, traces: string): Promise<number[]> {
  const script = fileURLToPath(new URL("./run.ts", import.meta.url));
  const children = Array.from({ length: n }, () =>
    spawn(
      process.execPath,
      [...process.execArgv, script, "cores", "child", workload, String(seconds), traces],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    ),
  );
  const lines = children.map((c) => createInterface({ input: c.stdout })[Symbol.asyncIterator]());
  const nextLine = async (i: number) => {
    const { value, done } = await lines[i].next();
    if (done) throw new Error(`cores: child ${i} (${workload}) ended early`);
    return value as string;
  };
  await Promise.all(children.map((_, i) => nextLine(i)));
  children.forEach((c) => c.stdin.end("go\n"));
  const results = await Promise.all(
    children.map(async (_, i) => JSON.parse(await nextLine(i)) as { perS: number }),
  );
  return results.map((r) => r.perS);
}

/** One child: set up, say "ready", wait for a line, then run `workload` for `seconds`. */
async function child(workload: Workload, seconds: number, traces: string): Promise<Record<string, unknown>> {
  const run = await runnerOf(workload, traces);
  console.log("ready");
  for await (const _ of createInterface({ input: process.stdin })) break;
  return { perS: (await run(seconds * 1000)) / seconds };
}

/** The workload, set up and warm: runs it for `ms` and answers the units it did. */
async function runnerOf(workload: Workload, traces: string): Promise<(ms: number) => Promise<number>> {
  if (workload === "pool") return await poolRunner(traces);
  const step =
    workload === "matcher" ? await matcherStep(traces) : workload === "alu" ? aluStep() : memoryStep();
  return async (ms) => {
    const started = performance.now();
    let units = 0;
    while (performance.now() - started < ms) units += step();
    return units;
  };
}

function aluStep(): () => number {
  let x = 1;
  return () => {
    for (let i = 0; i < 1e6; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
    // Never true: the loop's result is used.
    return x === 0.5 ? 0 : 1;
  };
}

function memoryStep(): () => number {
  const size = 8_000_000;
  const cells = new Float64Array(size);
  let pass = 0;
  return () => {
    let sum = 0;
    pass++;
    for (let i = 0; i < 1e6; i++) {
      const at = (i * 7919 + pass * 104_729) % size;
      sum += cells[at];
      cells[at] = sum;
    }
    return 1;
  };
}

/** One trip matched per step, the file's trips over and over: the points. */
async function matcherStep(traces: string): Promise<() => number> {
  const { network, trips } = await matcherInput(traces);
  const match = tripMatcher(network);
  trips.forEach((trip) => match(trip));
  let next = 0;
  return () => {
    const trip = trips[next++ % trips.length];
    match(trip);
    return trip.points.length;
  };
}

/**
 * The pool's 2 workers fed as the ingest feeds them (groups of GROUP_TRIPS, at most GROUPS_IN_FLIGHT out), the
 * file's trips over and over, and what they send back taken as the ingest takes it on this thread (`storeWorkAhead`:
 * into a batch's tallies and trip columns): the points of the groups matched in the time,
 * the steady rate without a run's start and end.
 */
async function poolRunner(traces: string): Promise<(ms: number) => Promise<number>> {
  const { network, trips } = await matcherInput(traces);
  const pool = new MatchPool(network, 2);
  const groups = Array.from({ length: Math.ceil(trips.length / GROUP_TRIPS) }, (_, g) =>
    trips.slice(g * GROUP_TRIPS, (g + 1) * GROUP_TRIPS),
  );
  const clock = new LocalClock("Europe/Monaco");
  const ahead = storeWorkAhead(() => new SegmentCellAccumulator(network, clock));
  let batch = ahead.open();
  // What the ingest does with each matched trip before its batch's store; a fresh batch every DEFAULT_BATCH_TRIPS.
  const take = (outcomes: MatchOutcome[]) => {
    for (const outcome of outcomes)
      if ("matched" in outcome) for (const trip of outcome.matched) ahead.add(batch, trip);
    if (batch.trips.count < DEFAULT_BATCH_TRIPS) return;
    batch.cells.drainBatch();
    batch = ahead.open();
  };
  for (const outcomes of await Promise.all(groups.map(pool.match))) take(outcomes);
  const pointsOf = groups.map((group) => group.reduce((n, trip) => n + trip.points.length, 0));
  return async (ms) => {
    const until = performance.now() + ms;
    let points = 0;
    let next = 0;
    const feed = async (): Promise<void> => {
      while (performance.now() < until) {
        const g = next++ % groups.length;
        take(await pool.match(groups[g]));
        if (performance.now() <= until) points += pointsOf[g];
      }
    };
    await Promise.all(Array.from({ length: GROUPS_IN_FLIGHT }, feed));
    await pool.close();
    return points;
  };
}

async function matcherInput(traces: string) {
  return { network: new Network("mc", await readOsmSegments(MONACO_PBF)), trips: await splitTrips(traces) };
}
