import type { LonLat } from "../network/types.js";
import type { GpsPoint, TraceSource } from "../trips/types.js";
import type { Landscape } from "./population.js";
import type { Rng } from "./rng.js";
import type { RouteStep } from "./routes.js";

/** The true movement of one trip: route geometry with the epoch ms at which each vertex is passed. */
export interface Track {
  coords: LonLat[];
  times: number[];
  /** Epoch ms at which each step is entered; the last step ends at the last time. */
  stepStarts: number[];
}

/**
 * Lays the route's geometry out in time: each step takes `secondsOf(step)`,
 * spread over its vertices in proportion to distance.
 */
export function timedTrack(
  land: Landscape,
  steps: RouteStep[],
  startT: number,
  secondsOf: (step: RouteStep) => number,
): Track {
  const { ruler } = land.network;
  const coords: LonLat[] = [];
  const times: number[] = [];
  const stepStarts: number[] = [];
  let t = startT;
  for (const step of steps) {
    stepStarts.push(Math.round(t));
    const piece = stepGeometry(land, step);
    const duration = secondsOf(step) * 1000;
    const total = ruler.lineDistance(piece) || 1;
    let done = 0;
    piece.forEach((p, k) => {
      if (k > 0) done += ruler.distance(piece[k - 1], p);
      coords.push(p);
      times.push(Math.round(t + (duration * done) / total));
    });
    t += duration;
  }
  return { coords, times, stepStarts };
}

/** The part of a segment's geometry a step covers, in travel order. */
export function stepGeometry(land: Landscape, step: RouteStep): LonLat[] {
  const seg = land.network.segments[step.segmentIndex];
  const length = land.geometryM[step.segmentIndex];
  const lo = Math.min(step.from, step.to);
  const hi = Math.max(step.from, step.to);
  const piece =
    lo === 0 && hi === 1
      ? seg.coords.slice()
      : land.network.ruler.lineSliceAlong(lo * length, hi * length, seg.coords);
  return step.forward ? piece : piece.reverse();
}

export interface SamplingOptions {
  source: TraceSource;
  /** Telematics: fixed interval; lbs: mean interval. Seconds. */
  samplingS: number;
  /** σ of the Gaussian position error per axis, metres. */
  noiseM: number;
}

/** Chance that a phone's next fix comes after a long gap (app in background, no signal). */
const LBS_DROPOUT_CHANCE = 0.04;
/** No gap inside a trip reaches the ingest's 10-minute trip split. */
export const MAX_FIX_GAP_S = 300;

/** Fixes along a track: first at departure, last at arrival, noisy positions; telematics adds speed and heading. */
export function sampleTrack(land: Landscape, track: Track, opts: SamplingOptions, rng: Rng): GpsPoint[] {
  const start = track.times[0];
  const end = track.times[track.times.length - 1];
  const points: GpsPoint[] = [];
  let k = 0;
  for (const t of sampleTimes(start, end, opts, rng)) {
    while (k < track.times.length - 2 && track.times[k + 1] <= t) k++;
    points.push(fixAt(land, track, k, t, opts, rng));
  }
  return points;
}

function sampleTimes(start: number, end: number, opts: SamplingOptions, rng: Rng): number[] {
  const times = [start];
  for (;;) {
    const gapS = Math.min(
      MAX_FIX_GAP_S,
      opts.source === "telematics" ? opts.samplingS : lbsGapS(opts.samplingS, rng),
    );
    const t = Math.round(times[times.length - 1] + gapS * 1000);
    if (t >= end) break;
    times.push(t);
  }
  if (end > start) times.push(end);
  return times;
}

/** Irregular phone fixes: a floor plus an exponential tail (mean = samplingS), with occasional long dropouts. */
function lbsGapS(meanS: number, rng: Rng): number {
  const gap = meanS * (0.25 + rng.exponential(0.75));
  return Math.max(1, rng.chance(LBS_DROPOUT_CHANCE) ? gap * rng.range(3, 8) : gap);
}

function fixAt(
  land: Landscape,
  track: Track,
  k: number,
  t: number,
  opts: SamplingOptions,
  rng: Rng,
): GpsPoint {
  const { ruler } = land.network;
  const a = track.coords[k];
  const b = track.coords[k + 1] ?? a;
  const span = (track.times[k + 1] ?? track.times[k]) - track.times[k];
  const share = span > 0 ? Math.min(1, Math.max(0, (t - track.times[k]) / span)) : 0;
  const truth: LonLat = [a[0] + (b[0] - a[0]) * share, a[1] + (b[1] - a[1]) * share];
  const [lon, lat] = ruler.offset(truth, rng.normal() * opts.noiseM, rng.normal() * opts.noiseM);
  const point: GpsPoint = { lon, lat, t };
  if (opts.source === "telematics") {
    const speed = span > 0 ? (ruler.distance(a, b) / span) * 1000 : 0;
    point.speed = Math.max(0, speed * (1 + 0.03 * rng.normal()));
    point.heading = (((ruler.bearing(a, b) + 3 * rng.normal()) % 360) + 360) % 360;
  }
  return point;
}
