/**
 * Map-matching accuracy and speed: `npm run bench -- matching [count=1000] [samplingS=30] [noiseM=10] [grid]`.
 * By default the product's trip generator simulates lbs traces on the real Monaco network
 * (data/osm/monaco.osm.pbf, fixed seed); with `grid` the older synthetic grid and its
 * fastest-path traces are used instead. Each trace is matched as one RawTrip. Reports the
 * share of ground-truth route length matched correctly (1 − Newson & Krumm's route mismatch
 * fraction; length-weighted over all trips, and mean/median per trip), origin/destination
 * errors, broken trips and GPS points matched per wall second and per CPU second.
 *
 * Speed: the cold pass matches the first `count` traces in a fresh process (V8 compiling the
 * matcher, route-ball cache empty); the steady pass then matches `count` further traces the process
 * has not seen (warm code and caches, as deep into a long ingest). Accuracy is that of the first set.
 */
import { fileURLToPath } from "node:url";
import { loadavg } from "node:os";
import { endpointErrorM, matchTrip, routeMismatchFraction } from "../src/engine/matching/index.js";
import { Network } from "../src/engine/network/network.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { Simulation } from "../src/engine/simulate/index.js";
import type { LonLat } from "../src/engine/network/types.js";
import type { MatchedTrip, RawTrip } from "../src/engine/trips/types.js";
import { gridNetwork, syntheticTraces } from "./lib/synthetic.js";

const MONACO = fileURLToPath(new URL("../data/osm/monaco.osm.pbf", import.meta.url));

/** A trace to match with what really happened. */
interface BenchTrace {
  trip: RawTrip;
  truth: { segmentId: number; forward: boolean }[];
  origin: LonLat;
  destination: LonLat;
}

export default async function matchingBench(args: string[]): Promise<Record<string, unknown>> {
  const grid = args.includes("grid");
  const [count = 1000, samplingS = 30, noiseM = 10] = args.filter((a) => a !== "grid").map(Number);
  const { network, traces, label } = grid
    ? gridTraces(2 * count, samplingS, noiseM)
    : await monacoTraces(2 * count, samplingS, noiseM);
  const load = loadavg();
  const later = traces.splice(count);
  const cold = timed(() => traces.map((trace) => matchTrip(network, trace.trip)));
  const warm = timed(() => later.map((trace) => matchTrip(network, trace.trip)));
  const results = cold.value;
  const points = traces.reduce((n, t) => n + t.trip.points.length, 0);
  const laterPoints = later.reduce((n, t) => n + t.trip.points.length, 0);
  return {
    network: `${label}, ${network.size} segments`,
    traces: traces.length,
    samplingS,
    noiseM,
    points,
    ...accuracyOf(network, traces, results),
    ...endpointStats(network, traces, results),
    brokenTrips: results.filter((pieces) => pieces.length !== 1).length,
    unmatchedTrips: results.filter((pieces) => pieces.length === 0).length,
    steadyTraces: later.length,
    steadyPoints: laterPoints,
    wallS: round(warm.seconds, 2),
    cpuS: round(warm.cpuSeconds, 2),
    pointsPerSecond: Math.round(laterPoints / warm.seconds),
    // CPU time of this process: the per-core figure, steadier than wall time on a shared machine.
    pointsPerCpuSecond: Math.round(laterPoints / warm.cpuSeconds),
    coldPointsPerCpuSecond: Math.round(points / cold.cpuSeconds),
    coldToSteady: round(points / cold.cpuSeconds / (laterPoints / warm.cpuSeconds), 2),
    loadAvg1m: round(load[0], 2),
  };
}

function timed<T>(run: () => T): { value: T; seconds: number; cpuSeconds: number } {
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  const value = run();
  const cpu = process.cpuUsage(cpuBefore);
  return {
    value,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

/** Simulated lbs trips on the real Monaco network: the first `count` of a fixed-seed March, then more from April. */
async function monacoTraces(count: number, samplingS: number, noiseM: number) {
  const network = new Network("mc", await readOsmSegments(MONACO));
  const sim = new Simulation(network, {
    from: "2025-03",
    to: "2025-04",
    // Half as many per day over two months: March gives the same first traces as the one-month bench did.
    tripsPerDay: Math.max(10, Math.ceil(count / 50)),
    seed: 7,
    source: "lbs",
    samplingS,
    noiseM,
  });
  const traces: BenchTrace[] = [];
  for (const simTrip of sim.trips()) {
    if (traces.length >= count) break;
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
