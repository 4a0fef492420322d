/**
 * Ground truth of an independent trace on Streetflow's network, and the recall / precision of a match
 * against it. SUMO's edges run between OSM junction nodes of one way; Streetflow's segments split the
 * same ways at (at least) the same nodes, so each edge maps onto a run of consecutive segments of its way.
 */
import { matchTrip } from "../../src/engine/matching/index.js";
import { dijkstra, lengthWeight, pathTo } from "../../src/engine/network/routing.js";
import type { MatchOptions } from "../../src/engine/matching/options.js";
import type { Network } from "../../src/engine/network/network.js";
import type { GpsPoint, MatchedTrip } from "../../src/engine/trips/types.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import type { SumoEdge, SumoSample, SumoVehicle } from "./sumo-monaco.js";
import { SAMPLE_STEP_S } from "./sumo-monaco.js";

export interface DirectedSegment {
  segmentId: number;
  forward: boolean;
}

const keyOf = (s: DirectedSegment) => s.segmentId * 2 + (s.forward ? 0 : 1);

/** The segments one SUMO edge covers, in driving order; null when its way or ends are not in the network. */
export function segmentsOfEdge(network: Network, [wayId, ...ends]: SumoEdge): DirectedSegment[] | null {
  // The way's vertices in order, each with the segment that leaves it.
  const vertices: { lon: number; lat: number; segmentId: number }[] = [];
  for (const s of network
    .segmentsOfWay(wayId)
    .slice()
    .sort((a, b) => a.index - b.index)) {
    for (const [lon, lat] of s.coords.slice(0, -1)) vertices.push({ lon, lat, segmentId: s.id });
    const [lon, lat] = s.coords[s.coords.length - 1];
    vertices.push({ lon, lat, segmentId: -1 });
  }
  const at = (lon: number, lat: number) =>
    vertices.flatMap((v, i) => (Math.abs(v.lon - lon) < 2e-7 && Math.abs(v.lat - lat) < 2e-7 ? [i] : []));
  const froms = at(ends[0], ends[1]);
  const tos = at(ends[2], ends[3]);
  const n = vertices.length - 1;
  const closed = n > 0 && at(vertices[0].lon, vertices[0].lat).includes(n);
  const oneway = network.segmentsOfWay(wayId).some((s) => s.oneway);
  // Vertex steps of each way from p to q: forward, forward round a closed way, and (two-way only) back.
  let best: number[] | null = null;
  const consider = (steps: number[]) => {
    if (steps.length > 0 && (!best || steps.length < best.length)) best = steps;
  };
  const range = (a: number, b: number) => Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i);
  for (const p of froms) {
    for (const q of tos) {
      if (p < q) consider(range(p, q));
      else if (closed) consider([...range(p, n), ...range(0, q)]);
      if (oneway) continue;
      if (p > q) consider(range(q, p).map((i) => -1 - i));
      else if (closed) consider([...range(0, p), ...range(q, n)].map((i) => -1 - i));
    }
  }
  if (!best) return null;
  const run: DirectedSegment[] = [];
  const steps: number[] = best;
  // Backward steps are stored as −1 − i and walked in reverse.
  const ordered = steps[0] < 0 ? steps.map((i) => -1 - i).reverse() : steps;
  for (const i of ordered) {
    const segmentId = vertices[i].segmentId;
    if (segmentId < 0) continue;
    if (run.length === 0 || run[run.length - 1].segmentId !== segmentId) {
      run.push({ segmentId, forward: steps[0] >= 0 });
    }
  }
  return run;
}

const edgeOf = (network: Network, s: DirectedSegment) =>
  network.indexOfSegment(s.segmentId)! * 2 + (s.forward ? 0 : 1);

/**
 * SUMO drives across a junction on internal lanes that belong to no edge, and it merges close junctions
 * (small roundabouts, split carriageway crossings) into one: consecutive edges then leave a gap of a few
 * metres to about a hundred. The truth across it is the shortest car route in Streetflow's network.
 */
function junctionGap(network: Network, from: DirectedSegment, to: DirectedSegment): DirectedSegment[] {
  const { edgeFrom, edgeTo } = network.graph;
  const source = edgeTo[edgeOf(network, from)];
  const target = edgeFrom[edgeOf(network, to)];
  if (source === target) return [];
  const tree = dijkstra(network, source, lengthWeight(network), {
    maxCost: 300,
    targets: [target],
    allowed: (edge) => {
      const segment = network.segments[edge >> 1];
      return network.allows(segment, "car") && (!segment.oneway || (edge & 1) === 0);
    },
  });
  return (pathTo(network, tree, target) ?? []).map((edge) => ({
    segmentId: network.segments[edge >> 1].id,
    forward: (edge & 1) === 0,
  }));
}

/** The true route between two samples, trimmed at both ends to the segment nearest the clean position. */
export function truthBetween(
  network: Network,
  vehicle: SumoVehicle,
  first: SumoSample,
  last: SumoSample,
): DirectedSegment[] | null {
  const route: DirectedSegment[] = [];
  let firstEdgeEnd = 0;
  for (let e = first[3]; e <= last[3]; e++) {
    const run = segmentsOfEdge(network, vehicle.edges[e]);
    if (!run) return null;
    const previous = route[route.length - 1];
    if (previous && keyOf(previous) !== keyOf(run[0])) route.push(...junctionGap(network, previous, run[0]));
    for (const s of run) if (route.length === 0 || keyOf(route[route.length - 1]) !== keyOf(s)) route.push(s);
    if (e === first[3]) firstEdgeEnd = route.length;
  }
  const nearest = (sample: SumoSample, lo: number, hi: number) => {
    let best = lo;
    let bestM = Infinity;
    for (let i = lo; i < hi; i++) {
      const d = network.hitOf(network.segmentById(route[i].segmentId)!, [sample[1], sample[2]]).distanceM;
      if (d < bestM - 0.5) [best, bestM] = [i, d];
    }
    return best;
  };
  const lastEdgeStart = route.length - (segmentsOfEdge(network, vehicle.edges[last[3]])?.length ?? 1);
  const from = nearest(first, 0, firstEdgeEnd);
  const to = nearest(last, Math.max(from, lastEdgeStart), route.length);
  return route.slice(from, to + 1);
}

/** The vehicle's fixes every `intervalS` seconds with Gaussian noise of `noiseM` per axis (seeded by car). */
export function noisyTrace(network: Network, vehicle: SumoVehicle, intervalS: number, noiseM: number) {
  const rng = new Rng(16, vehicle.id, intervalS);
  const every = Math.max(1, Math.round(intervalS / SAMPLE_STEP_S));
  const kept = vehicle.samples.filter((_, i) => i % every === 0);
  const points: GpsPoint[] = kept.map(([t, lon, lat]) => {
    const [x, y] = network.ruler.offset([lon, lat], rng.normal() * noiseM, rng.normal() * noiseM);
    return { t: Date.UTC(2026, 0, 5, 8) + t * 1000, lon: x, lat: y };
  });
  return { points, first: kept[0], last: kept[kept.length - 1] };
}

export interface AccuracyTotals {
  vehicles: number;
  skipped: number;
  /** Cars whose SUMO route uses a road closed to cars in Streetflow's network. */
  barred: number;
  points: number;
  truthM: number;
  recalledM: number;
  matchedM: number;
  preciseM: number;
  tripsRecall95: number;
  extraPieces: number;
  cpuMs: number;
  /** Matched length off the true route, by cause (see `offRouteCause`). */
  offRouteM: Record<string, number>;
  /** True route length not matched, by where it lies (see `addMissed`). */
  missedM: Record<string, number>;
}

/** Matches every vehicle's noisy trace and sums recall and precision by segment length. */
export function measureAccuracy(
  network: Network,
  vehicles: SumoVehicle[],
  intervalS: number,
  opts: { noiseM?: number; match?: MatchOptions } = {},
): AccuracyTotals {
  const totals: AccuracyTotals = {
    vehicles: 0,
    skipped: 0,
    barred: 0,
    points: 0,
    truthM: 0,
    recalledM: 0,
    matchedM: 0,
    preciseM: 0,
    tripsRecall95: 0,
    extraPieces: 0,
    cpuMs: 0,
    offRouteM: {},
    missedM: {},
  };
  const lengthOf = (s: DirectedSegment) => network.segmentById(s.segmentId)!.lengthM;
  for (const vehicle of vehicles) {
    const { points, first, last } = noisyTrace(network, vehicle, intervalS, opts.noiseM ?? 10);
    const truth = points.length >= 2 ? truthBetween(network, vehicle, first, last) : null;
    if (!truth || truth.length === 0) {
      totals.skipped++;
      continue;
    }
    // SUMO's OSM import ignores access=no (e.g. Allées des Boulingrins); Streetflow bars cars there, so
    // such a car's route is no ground truth for a car matcher.
    if (truth.some((s) => !network.allows(network.segmentById(s.segmentId)!, "car"))) {
      totals.barred++;
      continue;
    }
    const cpu = process.cpuUsage();
    const matched: MatchedTrip[] = matchTrip(
      network,
      { deviceId: vehicle.id, vehicleClass: "personal", source: "telematics", points },
      opts.match,
    );
    const used = process.cpuUsage(cpu);
    totals.cpuMs += (used.user + used.system) / 1000;
    totals.vehicles++;
    totals.points += points.length;
    totals.extraPieces += Math.max(0, matched.length - 1);
    const truthKeys = new Set(truth.map(keyOf));
    const matchedSteps = matched.flatMap((m) => m.path);
    const matchedKeys = new Set(matchedSteps.map(keyOf));
    let truthM = 0;
    let recalledM = 0;
    for (const s of truth) {
      truthM += lengthOf(s);
      if (matchedKeys.has(keyOf(s))) recalledM += lengthOf(s);
    }
    for (const s of matchedSteps) {
      totals.matchedM += lengthOf(s);
      if (truthKeys.has(keyOf(s))) totals.preciseM += lengthOf(s);
    }
    for (const m of matched) addOffRoute(network, truth, m.path, totals.offRouteM);
    addMissed(network, truth, matchedKeys, totals.missedM);
    totals.truthM += truthM;
    totals.recalledM += recalledM;
    if (recalledM >= 0.95 * truthM) totals.tripsRecall95++;
  }
  return totals;
}

/**
 * Sorts the matched length off the true route by cause, one maximal run of off-route steps at a time:
 * `reverse` the true route's own segments driven the other way (U-turn pairs, back-and-forth at a
 * stop), `start`/`end` a run at either end of a matched piece (first or last segment overshoot),
 * `spur` a run that leaves the true route at a node and comes back to the same node, `partly-reverse`
 * a run mixing both, and `detour` a run onto other roads between two points of the true route
 * (parallel roads, shortcuts), split at 60 m and 200 m.
 */
export function addOffRoute(
  network: Network,
  truth: DirectedSegment[],
  path: DirectedSegment[],
  out: Record<string, number>,
): void {
  const onRoute = new Set(truth.map(keyOf));
  const truthSegments = new Set(truth.map((s) => s.segmentId));
  const lengthOf = (s: DirectedSegment) => network.segmentById(s.segmentId)!.lengthM;
  for (let i = 0; i < path.length;) {
    if (onRoute.has(keyOf(path[i]))) {
      i++;
      continue;
    }
    let j = i;
    while (j < path.length && !onRoute.has(keyOf(path[j]))) j++;
    const run = path.slice(i, j);
    const runM = run.reduce((sum, s) => sum + lengthOf(s), 0);
    const cause = offRouteCause(network, run, runM, truthSegments, i === 0, j === path.length);
    out[cause] = (out[cause] ?? 0) + runM;
    i = j;
  }
}

/**
 * Sorts the true route's length that no matched piece covers, one maximal run of missed segments at a time:
 * `start` before the first segment matched, `end` after the last (the match began or ended on another
 * road, or the fixes there left the route open), `none` a trip matched nowhere on its route, and `gap`
 * runs between matched segments (what a detour left out), split at 60 m and 200 m like detours.
 */
export function addMissed(
  network: Network,
  truth: DirectedSegment[],
  matchedKeys: ReadonlySet<number>,
  out: Record<string, number>,
): void {
  const hit = truth.map((s) => matchedKeys.has(keyOf(s)));
  const first = hit.indexOf(true);
  const last = hit.lastIndexOf(true);
  for (let i = 0; i < truth.length;) {
    if (hit[i]) {
      i++;
      continue;
    }
    let runM = 0;
    let j = i;
    for (; j < truth.length && !hit[j]; j++) runM += network.segmentById(truth[j].segmentId)!.lengthM;
    const where = first < 0 ? "none" : i < first ? "start" : j > last ? "end" : `gap ${lengthClass(runM)}`;
    out[where] = (out[where] ?? 0) + runM;
    i = j;
  }
}

function offRouteCause(
  network: Network,
  run: DirectedSegment[],
  runM: number,
  truthSegments: Set<number>,
  atStart: boolean,
  atEnd: boolean,
): string {
  if (run.every((s) => truthSegments.has(s.segmentId))) return "reverse";
  if (atStart) return "start";
  if (atEnd) return "end";
  const { edgeFrom, edgeTo } = network.graph;
  if (edgeFrom[edgeOf(network, run[0])] === edgeTo[edgeOf(network, run[run.length - 1])]) return "spur";
  if (run.some((s) => truthSegments.has(s.segmentId))) return "partly-reverse";
  return `detour ${lengthClass(runM)}`;
}

const lengthClass = (m: number) => (m < 60 ? "<60 m" : m < 200 ? "60-200 m" : ">200 m");

export function summary(t: AccuracyTotals) {
  const pct = (x: number) => Number((100 * x).toFixed(2));
  return {
    vehicles: t.vehicles,
    skipped: t.skipped,
    barred: t.barred,
    points: t.points,
    recallPct: pct(t.recalledM / t.truthM),
    precisionPct: pct(t.preciseM / t.matchedM),
    tripsRecall95Pct: pct(t.tripsRecall95 / t.vehicles),
    extraTripsPct: pct(t.extraPieces / t.vehicles),
    pointsPerCpuS: Math.round(t.points / (t.cpuMs / 1000)),
    /** Share of the matched length off the true route, by cause: what precision loses where. */
    offRoutePctByCause: pctOf(t.offRouteM, t.matchedM),
    /** Share of the true route's length not matched, by where it lies: what recall loses where. */
    missedPctByCause: pctOf(t.missedM, t.truthM),
  };
}

/** Each cause's metres as a percentage of `totalM`, largest first. */
function pctOf(metresByCause: Record<string, number>, totalM: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metresByCause)
      .sort((a, b) => b[1] - a[1])
      .map(([cause, m]) => [cause, Number(((100 * m) / totalM).toFixed(3))]),
  );
}
