/**
 * Synthetic network and traces: `gridNetwork` (a jittered street grid) and
 * `syntheticTraces` (noisy fastest-path drives) back the `grid` variant of the
 * matching benchmark; `syntheticMatchedTrips` (fastest car paths as if matched) fills the analysis
 * benchmark's and the analysis-shard tests' stores; `randomOf` also seeds the analysis and counts fixtures.
 */
import CheapRuler from "cheap-ruler";
import { Network } from "../../src/engine/network/network.js";
import { DijkstraWorkspace, pathTo, timeWeight } from "../../src/engine/network/routing.js";
import {
  ACCESS_BIKE,
  ACCESS_CAR,
  ACCESS_FOOT,
  segmentIdOf,
  type LonLat,
  type Segment,
} from "../../src/engine/network/types.js";
import type { GpsPoint, MatchedTrip, RawTrip, VehicleClass } from "../../src/engine/trips/types.js";

export type Random = () => number;

/** Deterministic uniform [0, 1) (mulberry32). */
export function randomOf(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function normalOf(random: Random): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/**
 * A jittered n × n street grid (`spacingM` apart) near Monaco: every 5th
 * street is a 50 km/h arterial, the rest 30 km/h, a fifth of the minor
 * streets are oneway and a tenth are missing, so routes are not trivial.
 */
export function gridNetwork(n = 40, spacingM = 120, seed = 1): Network {
  const random = randomOf(seed);
  const ruler = new CheapRuler(43.73, "meters");
  const jitter = () => (random() - 0.5) * spacingM * 0.3;
  const nodes: LonLat[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      nodes.push(ruler.offset([7.42, 43.73], i * spacingM + jitter(), j * spacingM + jitter()) as LonLat);
    }
  }
  const segments: Segment[] = [];
  const addStreet = (a: number, b: number, arterial: boolean) => {
    if (!arterial && random() < 0.1) return;
    const oneway = !arterial && random() < 0.2;
    const [from, to] = oneway && random() < 0.5 ? [b, a] : [a, b];
    const coords = [nodes[from], nodes[to]];
    const wayId = segments.length + 1;
    segments.push({
      id: segmentIdOf(wayId, 0),
      wayId,
      index: 0,
      roadClass: arterial ? "secondary" : "residential",
      highway: arterial ? "secondary" : "residential",
      roadType: arterial ? "Secondary" : "Local",
      oneway,
      speedKph: arterial ? 50 : 30,
      name: null,
      lengthM: ruler.lineDistance(coords),
      fromNode: from + 1,
      toNode: to + 1,
      access: ACCESS_CAR | ACCESS_BIKE | ACCESS_FOOT,
      coords,
    });
  };
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i + 1 < n) addStreet(i * n + j, (i + 1) * n + j, j % 5 === 0);
      if (j + 1 < n) addStreet(i * n + j, i * n + j + 1, i % 5 === 0);
    }
  }
  return new Network("grid", segments);
}

export interface SyntheticTrace {
  trip: RawTrip;
  /** Directed segments driven between the first and the last fix. */
  truth: { segmentId: number; forward: boolean }[];
  origin: LonLat;
  destination: LonLat;
}

export interface TraceOptions {
  count: number;
  sampleS: number;
  noiseM: number;
  minRouteM: number;
  seed: number;
}

/** Fastest routes between random junctions, driven at the segments' speeds and sampled with Gaussian noise. */
export function* syntheticTraces(network: Network, o: TraceOptions): Generator<SyntheticTrace> {
  const random = randomOf(o.seed);
  const normal = normalOf(random);
  const workspace = new DijkstraWorkspace(network);
  const weight = timeWeight(network);
  const nodeCount = network.graph.nodeCount;
  for (let made = 0; made < o.count;) {
    const from = Math.floor(random() * nodeCount);
    const to = Math.floor(random() * nodeCount);
    const edges = pathTo(network, workspace.run(from, weight, { targets: [to] }), to);
    if (!edges || routeLengthM(network, edges) < o.minRouteM) continue;
    yield drive(network, edges, o, normal, `synthetic-${made}`);
    made++;
  }
}

function routeLengthM(network: Network, edges: number[]): number {
  return edges.reduce((sum, e) => sum + network.segments[e >> 1].lengthM, 0);
}

/** Samples a fix every `sampleS` seconds along the route; the truth ends where the last fix was taken. */
function drive(
  network: Network,
  edges: number[],
  o: TraceOptions,
  normal: () => number,
  deviceId: string,
): SyntheticTrace {
  const { ruler } = network;
  const t0 = Date.UTC(2026, 0, 5, 8);
  const points: GpsPoint[] = [];
  const truth: SyntheticTrace["truth"] = [];
  let nextSampleS = 0;
  let clockS = 0;
  let origin: LonLat | null = null;
  let destination: LonLat = [0, 0];
  const totalS = edges.reduce(
    (sum, e) => sum + network.segments[e >> 1].lengthM / (network.segments[e >> 1].speedKph / 3.6),
    0,
  );
  const lastSampleS = Math.floor(totalS / o.sampleS) * o.sampleS;
  for (const edge of edges) {
    const segment = network.segments[edge >> 1];
    const forward = (edge & 1) === 0;
    const line = forward ? segment.coords : [...segment.coords].reverse();
    const speed = segment.speedKph / 3.6;
    const endS = clockS + segment.lengthM / speed;
    if (clockS === 0 || clockS < lastSampleS) truth.push({ segmentId: segment.id, forward });
    for (; nextSampleS <= endS; nextSampleS += o.sampleS) {
      const at = ruler.along(line, (nextSampleS - clockS) * speed) as LonLat;
      origin ??= at;
      destination = at;
      const noisy = ruler.offset(at, o.noiseM * normal(), o.noiseM * normal());
      points.push({ lon: noisy[0], lat: noisy[1], t: t0 + Math.round(nextSampleS * 1000) });
    }
    clockS = endS;
  }
  return {
    trip: { deviceId, vehicleClass: "personal", source: "lbs", points },
    truth,
    origin: origin!,
    destination,
  };
}

export interface MatchedTripOptions {
  /** Starts are drawn uniformly from `[startFrom, startFrom + startSpanMs)`. */
  startFrom: number;
  startSpanMs: number;
  /** Routes drawn from one shortest-path tree before the next source is picked (many keep generation fast). */
  routesPerTree: number;
  /** Added to every step's time, e.g. odd milliseconds for durations that are no whole number of seconds. */
  extraMsPerStep?: number;
  /** Cumulative shares of personal and medium commercial trips; the rest are heavy commercial. */
  classCuts: [personal: number, medium: number];
  /** The device of the n-th trip. */
  deviceOf: (n: number) => string;
}

/** Fastest car paths between random junctions of `network`, as if matched, at each segment's speed. */
export function* syntheticMatchedTrips(
  network: Network,
  count: number,
  random: Random,
  options: MatchedTripOptions,
): Generator<MatchedTrip> {
  const workspace = new DijkstraWorkspace(network);
  const weight = timeWeight(network);
  const car = (edge: number) => (network.segments[edge >> 1].access & ACCESS_CAR) !== 0;
  const nodeCount = network.graph.nodeCount;
  let made = 0;
  while (made < count) {
    workspace.run(Math.floor(random() * nodeCount), weight, { allowed: car });
    for (let k = 0; k < options.routesPerTree && made < count; k++) {
      const edges = pathTo(network, workspace, Math.floor(random() * nodeCount));
      if (!edges || edges.length === 0) continue;
      yield matchedTripAlong(network, edges, random, options, made++);
    }
  }
}

function matchedTripAlong(
  network: Network,
  edges: number[],
  random: Random,
  options: MatchedTripOptions,
  n: number,
): MatchedTrip {
  const startT = options.startFrom + Math.floor(random() * options.startSpanMs);
  let t = startT;
  let lengthM = 0;
  const path = edges.map((edge) => {
    const s = network.segments[edge >> 1];
    const enterT = t;
    t += Math.round((s.lengthM / (s.speedKph / 3.6)) * 1000) + (options.extraMsPerStep ?? 0);
    lengthM += s.lengthM;
    return { segmentId: s.id, forward: (edge & 1) === 0, enterT, exitT: t };
  });
  const r = random();
  const [personal, medium] = options.classCuts;
  const vehicleClass: VehicleClass =
    r < personal ? "personal" : r < medium ? "medium_commercial" : "heavy_commercial";
  return {
    deviceId: options.deviceOf(n),
    vehicleClass,
    source: vehicleClass === "personal" ? "lbs" : "telematics",
    origin: edgeEnd(network, edges[0], true),
    destination: edgeEnd(network, edges[edges.length - 1], false),
    startT,
    endT: t,
    lengthM,
    path,
  };
}

/** Where travel along a directed edge (segment index × 2, +1 against its geometry) starts or ends. */
function edgeEnd(network: Network, edge: number, atStart: boolean): LonLat {
  const coords = network.segments[edge >> 1].coords;
  const forward = (edge & 1) === 0;
  return atStart === forward ? coords[0] : coords[coords.length - 1];
}
