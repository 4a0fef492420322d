import type { AccessMode, Network } from "../network/network.js";
import type { LonLat, RoadClass } from "../network/types.js";
import type { TraceSource, VehicleClass } from "../trips/types.js";
import { accessModeOf, VEHICLE_CLASSES } from "../trips/types.js";
import { cumulativeOf, Rng } from "./rng.js";
import { EngineError } from "../errors.js";

/** A place on the network: a point part-way along one segment's geometry. */
export interface Anchor {
  segmentIndex: number;
  /** 0..1 along the stored geometry. */
  fraction: number;
  point: LonLat;
}

/** Precomputed, seed-independent facts about the network that every draw reads. */
export interface Landscape {
  network: Network;
  /** Per mode, 1 where a segment is open to the mode and lies in the mode's main strongly connected part. */
  usable: Record<AccessMode, Uint8Array>;
  /** Geometry length by the network's ruler (may differ slightly from `lengthM`). */
  geometryM: Float64Array;
  midpoints: LonLat[];
  /** Residential length × residential density of the segment's cell. */
  homeWeight: Float64Array;
  /** Commercial-road length × its density: where jobs and depots are. */
  workWeight: Float64Array;
  /** Where non-work trips go: length × class appeal × work density. */
  attraction: Float64Array;
}

const HOME_CLASSES = new Set<RoadClass>(["residential", "living_street", "unclassified", "road"]);
const WORK_CLASSES = new Set<RoadClass>(["primary", "secondary", "tertiary", "service"]);
const APPEAL: Partial<Record<RoadClass, number>> = {
  primary: 3,
  secondary: 3,
  tertiary: 2.5,
  pedestrian: 2,
  service: 1.5,
  residential: 1,
  living_street: 1,
  unclassified: 1,
  road: 1,
  footway: 0.3,
  cycleway: 0.3,
  path: 0.3,
};
/** Density is measured over square cells this wide. */
const CELL_M = 300;

export function buildLandscape(network: Network): Landscape {
  const { segments, ruler } = network;
  const geometryM = new Float64Array(segments.length);
  const midpoints: LonLat[] = [];
  segments.forEach((s, i) => {
    geometryM[i] = ruler.lineDistance(s.coords);
    midpoints.push(ruler.along(s.coords, geometryM[i] / 2));
  });
  const cellOf = cellIndexer(network, midpoints);
  const homeDensity = densityByCell(segments.length, cellOf, (i) =>
    HOME_CLASSES.has(segments[i].roadClass) ? segments[i].lengthM : 0,
  );
  const workDensity = densityByCell(segments.length, cellOf, (i) =>
    WORK_CLASSES.has(segments[i].roadClass) ? segments[i].lengthM : 0,
  );
  const homeWeight = new Float64Array(segments.length);
  const workWeight = new Float64Array(segments.length);
  const attraction = new Float64Array(segments.length);
  segments.forEach((s, i) => {
    const cell = cellOf(i);
    if (HOME_CLASSES.has(s.roadClass)) homeWeight[i] = s.lengthM * (homeDensity.get(cell) ?? 0);
    if (WORK_CLASSES.has(s.roadClass)) workWeight[i] = s.lengthM * (workDensity.get(cell) ?? 0);
    attraction[i] = s.lengthM * (APPEAL[s.roadClass] ?? 0) * (1 + (workDensity.get(cell) ?? 0) / CELL_M);
  });
  const usable = {
    car: usableFor(network, "car"),
    bike: usableFor(network, "bike"),
    foot: usableFor(network, "foot"),
  };
  return { network, usable, geometryM, midpoints, homeWeight, workWeight, attraction };
}

/** Cell number of each segment's midpoint on a CELL_M grid. */
function cellIndexer(network: Network, midpoints: LonLat[]): (i: number) => number {
  let w = Infinity;
  let s = Infinity;
  for (const [x, y] of midpoints) {
    w = Math.min(w, x);
    s = Math.min(s, y);
  }
  const cells = midpoints.map(([x, y]) => {
    const cx = Math.floor((network.ruler.distance([w, y], [x, y]) || 0) / CELL_M);
    const cy = Math.floor((network.ruler.distance([x, s], [x, y]) || 0) / CELL_M);
    return cy * 100_000 + cx;
  });
  return (i) => cells[i];
}

function densityByCell(n: number, cellOf: (i: number) => number, lengthOf: (i: number) => number) {
  const density = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const len = lengthOf(i);
    if (len > 0) density.set(cellOf(i), (density.get(cellOf(i)) ?? 0) + len);
  }
  return density;
}

/**
 * Segments open to `mode` whose both ends lie in the largest strongly
 * connected part found, so any two usable segments reach each other.
 */
function usableFor(network: Network, mode: AccessMode): Uint8Array {
  const { segments, graph } = network;
  const edgeOk = (e: number) => graph.edgeFrom[e] >= 0 && network.allows(segments[e >> 1], mode);
  const inAdjacency = reverseAdjacency(network);
  let best: Uint8Array | null = null;
  let bestSize = 0;
  const step = Math.max(1, Math.floor(segments.length / 7));
  for (let i = 0; i < segments.length && bestSize <= graph.nodeCount / 2; i += step) {
    if (!network.allows(segments[i], mode)) continue;
    const seed = graph.edgeFrom[2 * i];
    const forward = reach(seed, graph.outStart, graph.outEdges, graph.edgeTo, edgeOk, graph.nodeCount);
    const backward = reach(
      seed,
      inAdjacency.start,
      inAdjacency.edges,
      graph.edgeFrom,
      edgeOk,
      graph.nodeCount,
    );
    const both = forward.map((f, n) => f & backward[n]);
    const size = both.reduce((a, b) => a + b, 0);
    if (size > bestSize) [best, bestSize] = [both, size];
  }
  const usable = new Uint8Array(segments.length);
  if (!best || bestSize < 2) return usable;
  segments.forEach((s, i) => {
    if (network.allows(s, mode) && best[graph.edgeFrom[2 * i]] && best[graph.edgeTo[2 * i]]) usable[i] = 1;
  });
  return usable;
}

function reverseAdjacency(network: Network): { start: Int32Array; edges: Int32Array } {
  const { nodeCount, edgeTo } = network.graph;
  const start = new Int32Array(nodeCount + 1);
  for (let e = 0; e < edgeTo.length; e++) if (edgeTo[e] >= 0) start[edgeTo[e] + 1]++;
  for (let n = 0; n < nodeCount; n++) start[n + 1] += start[n];
  const fill = start.slice(0, nodeCount);
  const edges = new Int32Array(start[nodeCount]);
  for (let e = 0; e < edgeTo.length; e++) if (edgeTo[e] >= 0) edges[fill[edgeTo[e]]++] = e;
  return { start, edges };
}

/** Nodes reachable from `seed` over allowed edges (iterative DFS over a CSR adjacency). */
function reach(
  seed: number,
  start: Int32Array,
  edges: Int32Array,
  otherEnd: Int32Array,
  edgeOk: (e: number) => boolean,
  nodeCount: number,
): Uint8Array {
  const seen = new Uint8Array(nodeCount);
  const stack = [seed];
  seen[seed] = 1;
  while (stack.length > 0) {
    const node = stack.pop()!;
    for (let k = start[node]; k < start[node + 1]; k++) {
      const e = edges[k];
      const next = otherEnd[e];
      if (!seen[next] && edgeOk(e)) {
        seen[next] = 1;
        stack.push(next);
      }
    }
  }
  return seen;
}

/** A point drawn on a segment picked by weight; it keeps away from the junctions at both ends. */
export function anchorOn(land: Landscape, segmentIndex: number, rng: Rng): Anchor {
  const fraction = rng.range(0.1, 0.9);
  const coords = land.network.segments[segmentIndex].coords;
  return {
    segmentIndex,
    fraction,
    point: land.network.ruler.along(coords, fraction * land.geometryM[segmentIndex]),
  };
}

/** Weights restricted to segments usable by `mode`; falls back to any usable segment when all are 0. */
export function usableWeights(land: Landscape, weights: Float64Array, mode: AccessMode): Float64Array {
  const usable = land.usable[mode];
  let out = weights.map((w, i) => (usable[i] ? w : 0));
  if (!out.some((w) => w > 0)) out = land.geometryM.map((len, i) => (usable[i] ? len : 0));
  return out;
}

// ---- devices ----------------------------------------------------------------------------------------

export interface Device {
  id: string;
  index: number;
  vehicleClass: VehicleClass;
  source: TraceSource;
  mode: AccessMode;
  /** Commercial vehicles run depot-based tours instead of a person's day. */
  commercial: boolean;
  /** Home for persons, depot for commercial vehicles. */
  home: Anchor;
  work: Anchor | null;
  incomeBand: number;
  /** Mean trips on an average day it is seen (scaled per weekday/weekend by the demand model). */
  tripsPerDay: number;
  /** Share of days the device is in the data at all (see PopulationOptions.presence). */
  presence: number;
  /** Telematics units report at a fixed interval; phones (lbs) at irregular ones around the mean. */
  samplingS: number;
  noiseM: number;
}

export type SourceMix = "lbs" | "telematics" | "mixed";

export interface PopulationOptions {
  /** Mean trips per day over a week (weekdays more, weekends fewer). */
  tripsPerDay: number;
  seed: number;
  source: SourceMix;
  /** Total devices; by default derived from tripsPerDay and each class's usual daily trips. */
  devices?: number;
  /**
   * Share of days (0..1] a device is in the data: a location panel sees a phone on some days only, and
   * on those days its whole day of trips. Devices grow by 1/presence so the trips per day stay as asked.
   * Default 1 (seen every day).
   */
  presence?: number;
  /** Sampling interval in seconds: fixed for telematics, mean for lbs (defaults: 5/10/15 s per unit, 30 s). */
  samplingS?: number;
  /** σ of the positional noise per axis in metres (defaults: lbs 10, telematics 5). */
  noiseM?: number;
  /** Share of trips per class; missing classes keep their default share, then all are normalised. */
  vehicleMix?: Partial<Record<VehicleClass, number>>;
}

export const DEFAULT_VEHICLE_MIX: Record<VehicleClass, number> = {
  personal: 0.85,
  medium_commercial: 0.06,
  heavy_commercial: 0.03,
  bicycle: 0.04,
  pedestrian: 0.02,
  // Riders of buses and trains come from the transit generator (transit.ts), not from road devices.
  bus: 0,
  rail: 0,
};
/** Average daily trips of one device; commercial vehicles make tours of several stops. */
const TRIPS_PER_DEVICE: Record<VehicleClass, number> = {
  personal: 2.5,
  medium_commercial: 6,
  heavy_commercial: 4,
  bicycle: 2,
  pedestrian: 2,
  bus: 2,
  rail: 2,
};
const WORKER_SHARE: Record<VehicleClass, number> = {
  personal: 0.6,
  medium_commercial: 0,
  heavy_commercial: 0,
  bicycle: 0.5,
  pedestrian: 0.4,
  bus: 0.5,
  rail: 0.5,
};
/** Distance decay of the job choice: walkers and cyclists work nearer home. */
const WORK_GAMMA: Record<AccessMode, number> = { car: 0.8, bike: 1.8, foot: 2.5 };
/** Share of each class's devices that are connected vehicles (telematics) in a "mixed" source. */
const TELEMATICS_SHARE: Record<VehicleClass, number> = {
  personal: 0.25,
  medium_commercial: 1,
  heavy_commercial: 1,
  bicycle: 0,
  pedestrian: 0,
  bus: 0,
  rail: 0,
};
const INCOME_WEIGHTS = cumulativeOf([0.15, 0.22, 0.28, 0.22, 0.13]);
const TELEMATICS_INTERVALS_S = [5, 10, 15];
export const DEFAULT_LBS_SAMPLING_S = 30;
export const DEFAULT_NOISE_M: Record<TraceSource, number> = { lbs: 10, telematics: 5 };

export function vehicleMixOf(mix?: Partial<Record<VehicleClass, number>>): Record<VehicleClass, number> {
  const merged = { ...DEFAULT_VEHICLE_MIX, ...(mix ?? {}) };
  const total = VEHICLE_CLASSES.reduce((sum, c) => sum + Math.max(0, merged[c]), 0);
  if (!(total > 0)) throw new EngineError("invalid_option", "vehicle mix has no positive share");
  return Object.fromEntries(VEHICLE_CLASSES.map((c) => [c, Math.max(0, merged[c]) / total])) as Record<
    VehicleClass,
    number
  >;
}

/** How many devices of each class: enough to make the class's share of tripsPerDay at its usual rate. */
export function deviceCounts(opts: PopulationOptions): Record<VehicleClass, number> {
  const mix = vehicleMixOf(opts.vehicleMix);
  const presence = opts.presence ?? 1;
  const raw = VEHICLE_CLASSES.map((c) => (opts.tripsPerDay * mix[c]) / TRIPS_PER_DEVICE[c] / presence);
  const rawTotal = raw.reduce((a, b) => a + b, 0);
  const scale = opts.devices !== undefined && rawTotal > 0 ? opts.devices / rawTotal : 1;
  return Object.fromEntries(
    VEHICLE_CLASSES.map((c, k) => [c, mix[c] > 0 ? Math.max(1, Math.round(raw[k] * scale)) : 0]),
  ) as Record<VehicleClass, number>;
}

/** The simulated fleet: homes by residential density, jobs and depots by commercial density. */
export function buildPopulation(land: Landscape, opts: PopulationOptions): Device[] {
  const rng = new Rng(opts.seed, "population");
  const mix = vehicleMixOf(opts.vehicleMix);
  const counts = deviceCounts(opts);
  const presence = opts.presence ?? 1;
  const homePicks = weightCache(land, land.homeWeight);
  const depotPicks = weightCache(land, land.workWeight);
  const devices: Device[] = [];
  for (const vehicleClass of VEHICLE_CLASSES) {
    for (let k = 0; k < counts[vehicleClass]; k++) {
      const mode = accessModeOf(vehicleClass);
      const commercial = WORKER_SHARE[vehicleClass] === 0;
      const home = anchorOn(land, rng.pick((commercial ? depotPicks : homePicks)(mode)), rng);
      const worker = rng.chance(WORKER_SHARE[vehicleClass]);
      const source = sourceOf(opts.source, vehicleClass, rng);
      const index = devices.length;
      devices.push({
        id: `sim${opts.seed}-${String(index + 1).padStart(6, "0")}`,
        index,
        vehicleClass,
        source,
        mode,
        commercial,
        home,
        work: worker ? workAnchor(land, home, mode, rng) : null,
        incomeBand: commercial ? 0 : incomeBandAt(home.point, land, opts.seed, rng),
        tripsPerDay: (opts.tripsPerDay * mix[vehicleClass]) / counts[vehicleClass] / presence,
        presence,
        samplingS:
          opts.samplingS ??
          (source === "telematics" ? TELEMATICS_INTERVALS_S[rng.int(3)] : DEFAULT_LBS_SAMPLING_S),
        noiseM: opts.noiseM ?? DEFAULT_NOISE_M[source],
      });
    }
  }
  return devices;
}

function weightCache(land: Landscape, weights: Float64Array) {
  const byMode = new Map<AccessMode, Float64Array>();
  return (mode: AccessMode) => {
    let cum = byMode.get(mode);
    if (!cum) byMode.set(mode, (cum = cumulativeOf(usableWeights(land, weights, mode))));
    return cum;
  };
}

function sourceOf(mix: SourceMix, vehicleClass: VehicleClass, rng: Rng): TraceSource {
  if (mix !== "mixed") return mix;
  return rng.chance(TELEMATICS_SHARE[vehicleClass]) ? "telematics" : "lbs";
}

/** Job location: commercial density discounted by distance from home (gravity). */
function workAnchor(land: Landscape, home: Anchor, mode: AccessMode, rng: Rng): Anchor {
  const gamma = WORK_GAMMA[mode];
  const base = usableWeights(land, land.workWeight, mode);
  const weights = base.map((w, i) =>
    w > 0
      ? w / Math.pow(Math.max(300, land.network.ruler.distance(home.point, land.midpoints[i])), gamma)
      : 0,
  );
  return anchorOn(land, rng.pick(cumulativeOf(weights)), rng);
}

/**
 * Household income band 1..5. Neighbourhoods differ (a per-500 m-cell
 * affluence drawn from the seed), so income has spatial structure.
 */
function incomeBandAt(p: LonLat, land: Landscape, seed: number, rng: Rng): number {
  const [kx, ky] = [land.network.ruler.kx, land.network.ruler.ky];
  const cell = `${Math.floor((p[0] * kx) / 500)}:${Math.floor((p[1] * ky) / 500)}`;
  const affluence = new Rng(seed, "affluence", cell).normal() * 0.8;
  const band = rng.pick(INCOME_WEIGHTS) + 1 + Math.round(affluence);
  return Math.min(5, Math.max(1, band));
}
