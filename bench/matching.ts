/**
 * Map-matching accuracy and speed on synthetic traces: `npm run bench -- matching [count] [sampleS] [noiseM]`.
 * Reports Newson & Krumm's route mismatch (length-weighted over all trips), the share of route length
 * matched correctly, origin/destination errors and GPS points matched per second on one core.
 */
import { endpointErrorM, matchTrip, routeMismatchFraction } from "../src/engine/matching/index.js";
import type { Network } from "../src/engine/network/network.js";
import type { PathStep } from "../src/engine/trips/types.js";
import { gridNetwork, syntheticTraces, type SyntheticTrace } from "./lib/synthetic.js";

export default async function matchingBench(args: string[]): Promise<Record<string, unknown>> {
  const [count = 2000, sampleS = 30, noiseM = 10] = args.map(Number);
  const network = gridNetwork();
  const traces = [...syntheticTraces(network, { count, sampleS, noiseM, minRouteM: 1500, seed: 42 })];
  const warmup = traces.slice(0, 20);
  for (const trace of warmup) matchTrip(network, trace.trip);
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  const results = traces.map((trace) => matchTrip(network, trace.trip));
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const points = traces.reduce((n, t) => n + t.trip.points.length, 0);
  return {
    network: `synthetic grid, ${network.size} segments`,
    traces: count,
    sampleS,
    noiseM,
    points,
    ...accuracyOf(
      network,
      traces,
      results.map((pieces) => pieces.flatMap((m) => m.path)),
    ),
    ...endpointStats(network, traces, results),
    brokenTrips: results.filter((pieces) => pieces.length !== 1).length,
    pointsPerSecond: Math.round(points / seconds),
    // CPU time of this process: the per-core figure, steadier than wall time on a shared machine.
    pointsPerCpuSecond: Math.round(points / cpuSeconds),
  };
}

function accuracyOf(network: Network, traces: SyntheticTrace[], paths: PathStep[][]) {
  let errorM = 0;
  let truthM = 0;
  traces.forEach((trace, i) => {
    const lengthM = trace.truth.reduce((s, step) => s + network.segmentById(step.segmentId)!.lengthM, 0);
    truthM += lengthM;
    errorM += routeMismatchFraction(network, trace.truth, paths[i]) * lengthM;
  });
  const mismatch = errorM / truthM;
  return { routeMismatchFraction: round(mismatch, 4), matchedCorrectlyShare: round(1 - mismatch, 4) };
}

function endpointStats(network: Network, traces: SyntheticTrace[], results: ReturnType<typeof matchTrip>[]) {
  const errors: number[] = [];
  traces.forEach((trace, i) => {
    const pieces = results[i];
    if (pieces.length === 0) return;
    const matched = { origin: pieces[0].origin, destination: pieces[pieces.length - 1].destination };
    const e = endpointErrorM(network, trace, matched);
    errors.push(e.originM, e.destinationM);
  });
  errors.sort((a, b) => a - b);
  const quantile = (q: number) =>
    round(errors[Math.min(errors.length - 1, Math.floor(q * errors.length))], 1);
  return { endpointErrorMedianM: quantile(0.5), endpointErrorP95M: quantile(0.95) };
}

function round(x: number, digits: number): number {
  return Number(x.toFixed(digits));
}
