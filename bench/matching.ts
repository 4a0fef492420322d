/**
 * Map-matching accuracy and speed:
 * `npm run bench -- matching [count=1000] [samplingS=30] [noiseM=10] [steadySets=5] [grid]`.
 * By default the product's trip generator simulates lbs traces on the real Monaco network
 * (data/osm/monaco.osm.pbf, fixed seed); with `grid` the older synthetic grid and its
 * fastest-path traces are used instead. Each trace is matched as one RawTrip. Reports the
 * share of ground-truth route length matched correctly (1 − Newson & Krumm's route mismatch
 * fraction; length-weighted over all trips, and mean/median per trip), origin/destination
 * errors, broken trips (matched in two or more pieces) and unmatched ones (none), of the first set and of
 * all sets (`brokenTripsAllSets`, `unmatchedTripsAllSets` of `tracesAllSets`), and
 * GPS points matched per wall second and per CPU second.
 *
 * Speed: the set-up's garbage is collected, then the network is prepared for matching as a service does
 * when it loads one (route balls precomputed, `prepareMatching`; its CPU is reported as `prepareCpuS`);
 * the cold pass then matches the first `count` traces in this fresh process (V8 compiling the matcher, no
 * ball grown yet); the steady passes then match `steadySets` sets of `count` further
 * traces each that the process has not seen (warm code and caches, as deep into a long ingest), and
 * the steady figure is the median set: one set is only ~0.3 s of CPU, which a shared machine's load
 * moves by ±20 %. Accuracy is that of the first set. `matchedSha1` digests every decoded trip of all
 * passes, so a speed change can show that it leaves the output identical.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import {
  DEFAULT_MATCH_OPTIONS,
  endpointErrorM,
  matchTrip,
  routeMismatchFraction,
} from "../src/engine/matching/index.js";
import { matchContextOf, prepareMatching } from "../src/engine/matching/context.js";
import { Network } from "../src/engine/network/network.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { Simulation } from "../src/engine/simulate/index.js";
import type { LonLat } from "../src/engine/network/types.js";
import type { MatchedTrip, RawTrip } from "../src/engine/trips/types.js";
import { collectGarbage } from "./lib/collect-garbage.js";
import { gridNetwork, syntheticTraces } from "./lib/synthetic.js";
import { MONACO_PBF } from "../test/helpers/bundled-data.js";

/** A trace to match with what really happened. */
interface BenchTrace {
  trip: RawTrip;
  truth: { segmentId: number; forward: boolean }[];
  origin: LonLat;
  destination: LonLat;
}

export default async function matchingBench(args: string[]): Promise<Record<string, unknown>> {
  const grid = args.includes("grid");
  const numbers = args.filter((a) => a !== "grid").map(Number);
  const [count = 1000, samplingS = 30, noiseM = 10, steadySets = 5] = numbers;
  const { network, traces, label } = grid
    ? gridTraces((1 + steadySets) * count, samplingS, noiseM)
    : await monacoTraces(count, (1 + steadySets) * count, samplingS, noiseM);
  const load = loadavg();
  // Simulating the traces grew the heap to ~66 MB, and V8 then collected all of it in full during the cold
  // pass: 0.1-0.2 s of CPU that a fresh process matching its first traces does not spend.
  collectGarbage();
  const prepared = timed(() => prepareMatching(network));
  const sets = Array.from({ length: 1 + steadySets }, (_, k) => traces.slice(k * count, (k + 1) * count));
  const passes = sets.map((set) => timed(() => set.map((trace) => matchTrip(network, trace.trip))));
  const first = sets[0];
  const results = passes[0].value;
  const pointsOf = (set: BenchTrace[]) => set.reduce((n, t) => n + t.trip.points.length, 0);
  const points = pointsOf(first);
  const cpuRates = passes.map((pass, k) => pointsOf(sets[k]) / pass.cpuSeconds);
  const steadyRates = cpuRates.slice(1).sort((a, b) => a - b);
  const steady = quantile(steadyRates, 0.5);
  const median = passes[1 + cpuRates.slice(1).indexOf(steady)];
  const medianPoints = pointsOf(sets[1 + cpuRates.slice(1).indexOf(steady)]);
  const countAllSets = (which: (pieces: MatchedTrip[]) => boolean) =>
    passes.reduce((n, pass) => n + pass.value.filter(which).length, 0);
  return {
    network: `${label}, ${network.size} segments`,
    traces: first.length,
    samplingS,
    noiseM,
    points,
    ...accuracyOf(network, first, results),
    ...endpointStats(network, first, results),
    brokenTrips: results.filter((pieces) => pieces.length > 1).length,
    // Over the cold and the steady sets: a break is rare enough that 1,000 traces show only a few.
    brokenTripsAllSets: countAllSets((pieces) => pieces.length > 1),
    unmatchedTripsAllSets: countAllSets((pieces) => pieces.length === 0),
    tracesAllSets: sets.reduce((n, set) => n + set.length, 0),
    unmatchedTrips: results.filter((pieces) => pieces.length === 0).length,
    matchedSha1: sha1OfMatches(passes.map((pass) => pass.value)),
    steadySets: steadyRates.length,
    steadyPoints: medianPoints,
    wallS: round(median.seconds, 2),
    cpuS: round(median.cpuSeconds, 2),
    pointsPerSecond: Math.round(medianPoints / median.seconds),
    // CPU time of this process: the per-core figure, steadier than wall time on a shared machine.
    pointsPerCpuSecond: Math.round(steady),
    steadyPointsPerCpuSecondPerSet: cpuRates.slice(1).map(Math.round),
    coldPointsPerCpuSecond: Math.round(cpuRates[0]),
    coldToSteady: round(cpuRates[0] / steady, 2),
    coldCpuS: round(passes[0].cpuSeconds, 3),
    // Once per network and process (worker threads share its result), not per matcher.
    prepareCpuS: round(prepared.cpuSeconds, 3),
    coldWithPrepareToSteady: round(points / (passes[0].cpuSeconds + prepared.cpuSeconds) / steady, 2),
    preparePageFaults: prepared.pageFaults,
    // Pages the cold pass touched for the first time: each costs a kernel fault (~15 µs on this machine).
    coldPageFaults: passes[0].pageFaults,
    routeBalls: matchContextOf(network, "car", DEFAULT_MATCH_OPTIONS.slowRoadPenalty).routes.stats,
    loadAvg1m: round(load[0], 2),
  };
}

/** SHA-1 (12 hex digits) of every matched trip of every pass, in order. */
function sha1OfMatches(passes: MatchedTrip[][][]): string {
  const hash = createHash("sha1");
  for (const pass of passes) for (const pieces of pass) hash.update(JSON.stringify(pieces));
  return hash.digest("hex").slice(0, 12);
}

/** Minor page faults of this process so far (Linux), NaN elsewhere. */
function minorPageFaults(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7]);
  } catch {
    return NaN;
  }
}

function timed<T>(run: () => T): { value: T; seconds: number; cpuSeconds: number; pageFaults: number } {
  const started = process.hrtime.bigint();
  const faultsBefore = minorPageFaults();
  const cpuBefore = process.cpuUsage();
  const value = run();
  const cpu = process.cpuUsage(cpuBefore);
  return {
    value,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    pageFaults: minorPageFaults() - faultsBefore,
  };
}

/**
 * `total` simulated lbs trips on the real Monaco network from a fixed-seed year starting in March; the
 * daily volume depends on `count` only, so the first `count` traces stay the same whatever the total.
 */
async function monacoTraces(count: number, total: number, samplingS: number, noiseM: number) {
  const network = new Network("mc", await readOsmSegments(MONACO_PBF));
  const sim = new Simulation(network, {
    from: "2025-03",
    to: "2026-02",
    // As many per day as when the bench took 2 × count traces from March and April: the same first traces.
    tripsPerDay: Math.max(10, Math.ceil((2 * count) / 50)),
    seed: 7,
    source: "lbs",
    samplingS,
    noiseM,
  });
  const traces: BenchTrace[] = [];
  for (const simTrip of sim.trips()) {
    if (traces.length >= total) break;
    const { truth, points } = simTrip;
    if (points.length < 2) continue;
    traces.push({
      trip: { deviceId: simTrip.deviceId, vehicleClass: simTrip.vehicleClass, source: "lbs", points },
      truth: truth.route,
      origin: truth.origin,
      destination: truth.destination,
    });
  }
  return { network, traces, label: "Monaco (data/osm/monaco.osm.pbf), simulated lbs trips" };
}

function gridTraces(count: number, samplingS: number, noiseM: number) {
  const network = gridNetwork();
  const traces = [
    ...syntheticTraces(network, { count, sampleS: samplingS, noiseM, minRouteM: 1500, seed: 42 }),
  ];
  return { network, traces, label: "synthetic grid, fastest paths" };
}

function accuracyOf(network: Network, traces: BenchTrace[], results: MatchedTrip[][]) {
  let errorM = 0;
  let truthM = 0;
  const perTrip: number[] = [];
  traces.forEach((trace, i) => {
    const lengthM = trace.truth.reduce((s, step) => s + network.segmentById(step.segmentId)!.lengthM, 0);
    const mismatch = routeMismatchFraction(
      network,
      trace.truth,
      results[i].flatMap((m) => m.path),
    );
    truthM += lengthM;
    errorM += mismatch * lengthM;
    // Mismatch can exceed 1 (a long wrong detour); a trip's correct share is floored at 0.
    perTrip.push(Math.max(0, 1 - mismatch));
  });
  perTrip.sort((a, b) => a - b);
  const mismatch = errorM / truthM;
  return {
    routeMismatchFraction: round(mismatch, 4),
    matchedCorrectlyShare: round(1 - mismatch, 4),
    matchedCorrectlyMeanPerTrip: round(perTrip.reduce((s, x) => s + x, 0) / perTrip.length, 4),
    matchedCorrectlyMedianPerTrip: round(quantile(perTrip, 0.5), 4),
    tripsFullyCorrect: perTrip.filter((x) => x === 1).length,
  };
}

function endpointStats(network: Network, traces: BenchTrace[], results: MatchedTrip[][]) {
  const errors: number[] = [];
  traces.forEach((trace, i) => {
    const pieces = results[i];
    if (pieces.length === 0) return;
    const matched = { origin: pieces[0].origin, destination: pieces[pieces.length - 1].destination };
    const e = endpointErrorM(network, trace, matched);
    errors.push(e.originM, e.destinationM);
  });
  errors.sort((a, b) => a - b);
  return {
    endpointErrorMedianM: round(quantile(errors, 0.5), 1),
    endpointErrorP95M: round(quantile(errors, 0.95), 1),
  };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function round(x: number, digits: number): number {
  return Number(x.toFixed(digits));
}
