import type { Network } from "../network/network.js";
import type { LonLat, TransitRoute } from "../network/types.js";
import type { MatchedTrip, PathStep, TripPurpose, VehicleClass } from "../trips/types.js";
import { dayFactor, dayTypeOf, departureSecond } from "./demand.js";
import { buildLandscape, type Anchor, type Landscape } from "./population.js";
import { cumulativeOf, Rng } from "./rng.js";
import { RoutePlanner, type RouteStep } from "./routes.js";
import { EngineError } from "../errors.js";

/**
 * Transit riders: people who walk to a stop, ride a bus along one of the network's `route=bus`
 * relations (or a train along its rail lines), and walk on to where they are going. Each leg is
 * a trip of its own (pedestrian, bus, pedestrian), as a phone's trace splits at the stops.
 *
 * Journeys come out as matched trips, their ground truth, not as GPS traces: a train runs on no
 * road segment, so there is nothing to map-match it to. A bus ride's path is the road segments
 * of its route; a train ride has an empty path and is seen by zones at its two stations.
 */
export interface TransitOptions {
  /** First and last month, inclusive ("YYYY-MM", UTC). */
  from: string;
  to: string;
  /** Mean rider journeys per day (weekdays busier than weekends). */
  ridersPerDay: number;
  seed: number;
}

/** A line as riders use it: its stops and, for a bus line, the road path between them. */
interface Line {
  kind: "bus" | "rail";
  /** Stop positions in travel order. */
  stops: LonLat[];
  /** Metres along the line at each stop. */
  stopM: number[];
  /** Bus lines: path steps (segment index, direction) and metres along the line where each begins. */
  steps: { segmentIndex: number; forward: boolean; startM: number; lengthM: number }[];
  speedKph: number;
}

/** Stops lie about this far apart along a line. */
const BUS_STOP_SPACING_M = 350;
const RAIL_STATION_SPACING_M = 1200;
/** Walking legs shorter than this are not kept (the ingest drops trips under 200 m too). */
const MIN_WALK_M = 200;
const WALK_KPH = 4.8;
/** Share of journeys by rail where the network has both. */
const RAIL_SHARE = 0.35;
const DAY_MS = 86_400_000;
/** Homes riders start from (see `homes`). */
const HOME_POOL = 150;

export class TransitSimulation {
  readonly lines: Line[];
  private readonly land: Landscape;
  private readonly planner: RoutePlanner;
  /** Where riders live: a fixed pool, so the walks' shortest-path trees are cached and reused. */
  private readonly homes: LonLat[];
  private readonly anchors = new Map<string, Anchor | null>();
  private readonly riders: number;

  constructor(
    private readonly network: Network,
    routes: readonly TransitRoute[],
    private readonly opts: TransitOptions,
  ) {
    if (!(opts.ridersPerDay > 0)) throw new EngineError("invalid_option", "ridersPerDay must be positive");
    this.lines = [
      ...routes.filter((r) => r.kind === "bus").map((r) => busLine(network, r)),
      ...railLines(
        network,
        routes.filter((r) => r.kind === "rail"),
      ),
    ].filter((l): l is Line => l !== null && l.stops.length >= 2);
    this.land = buildLandscape(network);
    this.planner = new RoutePlanner(network);
    const foot = this.land.usable.foot;
    const homeWeights = cumulativeOf(Array.from(this.land.homeWeight, (w, i) => (foot[i] ? w : 0)));
    const rng = new Rng(opts.seed, "transit-homes");
    this.homes = Array.from({ length: HOME_POOL }, () => {
      const i = rng.pick(homeWeights);
      return network.ruler.along(network.segments[i].coords, rng.range(0.1, 0.9) * this.land.geometryM[i]);
    });
    // Regular riders: each makes about two journeys a day.
    this.riders = Math.max(1, Math.round(opts.ridersPerDay / 2));
  }

  /** Every leg of every journey of the period, day by day; same network, routes and options give the same trips. */
  *trips(): Generator<MatchedTrip> {
    if (this.lines.length === 0) return;
    const buses = this.lines.filter((l) => l.kind === "bus");
    const trains = this.lines.filter((l) => l.kind === "rail");
    for (const dayStart of days(this.opts.from, this.opts.to)) {
      const rng = new Rng(this.opts.seed, "transit", new Date(dayStart).toISOString().slice(0, 10));
      const dayType = dayTypeOf(dayStart);
      const n = rng.poisson(this.opts.ridersPerDay * dayFactor("bus", dayType));
      for (let k = 0; k < n; k++) {
        const byRail = trains.length > 0 && (buses.length === 0 || rng.chance(RAIL_SHARE));
        const pool = byRail ? trains : buses;
        const line = pool[rng.int(pool.length)];
        const startT = dayStart + Math.round(departureSecond(line.kind, dayType, rng)) * 1000;
        const rider = `transit${this.opts.seed}-${String(rng.int(this.riders) + 1).padStart(5, "0")}`;
        yield* this.journey(line, rider, startT, rng);
      }
    }
  }

  /** Walk to a stop, ride some stops, walk on: up to three trips of one rider. */
  private *journey(line: Line, deviceId: string, startT: number, rng: Rng): Generator<MatchedTrip> {
    const board = rng.int(line.stops.length - 1);
    const alight = board + 1 + rng.int(Math.min(6, line.stops.length - 1 - board));
    const traveller = {
      deviceId,
      purpose: (rng.chance(0.5) ? "hbw" : "hbo") as TripPurpose,
      incomeBand: 1 + rng.int(5),
    };
    let t = startT;
    const walkIn = this.walk(this.home(rng), line.stops[board], t, traveller);
    if (walkIn) {
      yield walkIn;
      t = walkIn.endT + rng.range(1, 8) * 60_000; // waiting at the stop
    }
    const ride = this.ride(line, board, alight, t, traveller);
    yield ride;
    const walkOut = this.walk(line.stops[alight], this.home(rng), ride.endT + 30_000, traveller);
    if (walkOut) yield walkOut;
  }

  private home(rng: Rng): LonLat {
    return this.homes[rng.int(this.homes.length)];
  }

  private ride(line: Line, board: number, alight: number, startT: number, who: Traveller): MatchedTrip {
    const mps = line.speedKph / 3.6;
    const atM = (m: number) => startT + ((m - line.stopM[board]) / mps) * 1000;
    const path: PathStep[] = line.steps
      .filter((s) => s.startM >= line.stopM[board] && s.startM + s.lengthM <= line.stopM[alight] + 0.01)
      .map((s) => ({
        segmentId: this.network.segments[s.segmentIndex].id,
        forward: s.forward,
        enterT: atM(s.startM),
        exitT: atM(s.startM + s.lengthM),
      }));
    const lengthM = line.stopM[alight] - line.stopM[board];
    return trip(
      who,
      line.kind,
      line.stops[board],
      line.stops[alight],
      startT,
      atM(line.stopM[alight]),
      lengthM,
      path,
    );
  }

  /** A walk on the footpaths between two points, or null when there is none or it is too short to keep. */
  private walk(from: LonLat, to: LonLat, startT: number, who: Traveller): MatchedTrip | null {
    const a = this.anchorNear(from);
    const b = this.anchorNear(to);
    if (!a || !b) return null;
    const route = this.planner.plan(a, b, "foot");
    if (!route || route.lengthM < MIN_WALK_M) return null;
    const mps = WALK_KPH / 3.6;
    let t = startT;
    const path = route.steps.map((s: RouteStep) => {
      const seconds = (Math.abs(s.to - s.from) * this.land.geometryM[s.segmentIndex]) / mps;
      const step = {
        segmentId: this.network.segments[s.segmentIndex].id,
        forward: s.forward,
        enterT: Math.round(t),
        exitT: Math.round(t + seconds * 1000),
      };
      t += seconds * 1000;
      return step;
    });
    return trip(who, "pedestrian", a.point, b.point, startT, Math.round(t), route.lengthM, path);
  }

  private anchorNear(p: LonLat): Anchor | null {
    const key = `${p[0]},${p[1]}`;
    if (!this.anchors.has(key)) this.anchors.set(key, this.nearestFootAnchor(p));
    return this.anchors.get(key)!;
  }

  private nearestFootAnchor(p: LonLat): Anchor | null {
    const foot = this.land.usable.foot;
    const [hit] = this.network.nearest(p, 1, (s) => foot[this.network.indexOfSegment(s.id)!] === 1, 500);
    if (!hit) return null;
    const segmentIndex = this.network.indexOfSegment(hit.segment.id)!;
    const fraction = Math.min(1, hit.alongM / (this.land.geometryM[segmentIndex] || 1));
    return { segmentIndex, fraction, point: hit.point };
  }
}

type Traveller = { deviceId: string; purpose: TripPurpose; incomeBand: number };

function trip(
  who: Traveller,
  vehicleClass: VehicleClass,
  origin: LonLat,
  destination: LonLat,
  startT: number,
  endT: number,
  lengthM: number,
  path: PathStep[],
): MatchedTrip {
  return {
    deviceId: who.deviceId,
    vehicleClass,
    source: "lbs",
    origin,
    destination,
    startT: Math.round(startT),
    endT: Math.round(endT),
    lengthM: Math.round(lengthM * 10) / 10,
    path: path.map((s) => ({ ...s, enterT: Math.round(s.enterT), exitT: Math.round(s.exitT) })),
    purpose: who.purpose,
    incomeBand: who.incomeBand,
  };
}

/**
 * A bus route's road path: the relation's ways in order, each way's pieces turned to follow on
 * from the previous way (a route lists a way once whichever way it is driven).
 */
function busLine(network: Network, route: TransitRoute): Line | null {
  const steps: Line["steps"] = [];
  const coords: LonLat[] = [];
  let node: number | null = null;
  let along = 0;
  route.wayIds.forEach((wayId, k) => {
    const pieces = network.segmentsOfWay(wayId);
    if (pieces.length === 0) return;
    const first = pieces[0].fromNode;
    const last = pieces[pieces.length - 1].toNode;
    const next = network.segmentsOfWay(route.wayIds[k + 1] ?? -1);
    const nextNodes = new Set(next.flatMap((s) => [s.fromNode, s.toNode]));
    // Follow on from where the bus is; the first way is turned towards the second.
    const forward =
      node !== null ? node !== last || node === first : !nextNodes.has(first) || nextNodes.has(last);
    for (const s of forward ? pieces : [...pieces].reverse()) {
      const segmentIndex = network.indexOfSegment(s.id)!;
      steps.push({ segmentIndex, forward, startM: along, lengthM: s.lengthM });
      along += s.lengthM;
      coords.push(forward ? s.coords[0] : s.coords[s.coords.length - 1]);
    }
    node = forward ? last : first;
  });
  if (steps.length === 0) return null;
  const lastStep = network.segments[steps[steps.length - 1].segmentIndex];
  coords.push(
    steps[steps.length - 1].forward ? lastStep.coords[lastStep.coords.length - 1] : lastStep.coords[0],
  );
  // Stops at step boundaries about BUS_STOP_SPACING_M apart, the route's ends included.
  const stops: LonLat[] = [coords[0]];
  const stopM = [0];
  steps.forEach((s, i) => {
    const end = s.startM + s.lengthM;
    if (end - stopM[stopM.length - 1] >= BUS_STOP_SPACING_M || i === steps.length - 1) {
      stops.push(coords[i + 1]);
      stopM.push(end);
    }
  });
  return { kind: "bus", stops, stopM, steps, speedKph: 18 };
}

/** Rail ways joined end to end into lines (ways meeting at a shared end point), stations spaced along each. */
function railLines(network: Network, routes: readonly TransitRoute[]): Line[] {
  const key = ([x, y]: LonLat) => `${x.toFixed(7)},${y.toFixed(7)}`;
  const byEnd = new Map<string, number[]>();
  routes.forEach((r, i) => {
    for (const end of [r.coords[0], r.coords[r.coords.length - 1]])
      byEnd.set(key(end), [...(byEnd.get(key(end)) ?? []), i]);
  });
  const used = new Set<number>();
  const lines: Line[] = [];
  routes.forEach((_, start) => {
    if (used.has(start)) return;
    used.add(start);
    let coords = [...routes[start].coords];
    // Extend at the tail, then at the head, while exactly one unused way continues there.
    for (const atHead of [false, true]) {
      for (;;) {
        const end = atHead ? coords[0] : coords[coords.length - 1];
        const next = (byEnd.get(key(end)) ?? []).find((i) => !used.has(i));
        if (next === undefined) break;
        used.add(next);
        const c = routes[next].coords;
        const oriented = key(c[0]) === key(end) ? c : [...c].reverse();
        coords = atHead
          ? [...[...oriented].reverse(), ...coords.slice(1)]
          : [...coords, ...oriented.slice(1)];
      }
    }
    const lengthM = network.ruler.lineDistance(coords);
    const n = Math.max(1, Math.round(lengthM / RAIL_STATION_SPACING_M));
    if (lengthM < RAIL_STATION_SPACING_M / 2) return;
    const stopM = Array.from({ length: n + 1 }, (_, i) => (i * lengthM) / n);
    lines.push({
      kind: "rail",
      stops: stopM.map((m) => network.ruler.along(coords, m)),
      stopM,
      steps: [],
      speedKph: 45,
    });
  });
  return lines;
}

function days(from: string, to: string): number[] {
  const [fy, fm] = from.split("-").map(Number);
  const [ty, tm] = to.split("-").map(Number);
  const out: number[] = [];
  for (let t = Date.UTC(fy, fm - 1, 1); t < Date.UTC(ty, tm, 1); t += DAY_MS) out.push(t);
  return out;
}
