import type { Network } from "../network/network.js";
import type { LonLat, RoadClass } from "../network/types.js";
import type { GpsPoint, TraceSource, TripPurpose, VehicleClass } from "../trips/types.js";
import {
  dayFactor,
  dayTypeOf,
  diurnalProfile,
  departureSecond,
  Destinations,
  GravityModel,
  type DayType,
} from "./demand.js";
import { sampleTrack, timedTrack } from "./gps-sampler.js";
import {
  buildLandscape,
  buildPopulation,
  type Anchor,
  type Device,
  type Landscape,
  type PopulationOptions,
} from "./population.js";
import { Rng } from "./rng.js";
import { RoutePlanner, routingProfileOf, type PlannedRoute, type RouteStep } from "./routes.js";

export { DEFAULT_VEHICLE_MIX } from "./population.js";
export type { Device } from "./population.js";
export {
  groundTruthLine,
  parseGroundTruthLine,
  TRACE_CSV_HEADER,
  traceCsvRow,
  writeSimulation,
  writeTraces,
  type MonthFiles,
  type TraceFiles,
  type WriteSummary,
} from "./writers.js";
import { EngineError } from "../errors.js";

export interface SimulateOptions extends PopulationOptions {
  /** First and last month simulated, inclusive ("YYYY-MM", UTC). */
  from: string;
  to: string;
}

/** What really happened on a simulated trip: the reference map matching and analyses are checked against. */
export interface GroundTruthTrip {
  tripId: string;
  deviceId: string;
  vehicleClass: VehicleClass;
  source: TraceSource;
  purpose: TripPurpose;
  /** Household income band 1..5; 0 for commercial vehicles. */
  incomeBand: number;
  origin: LonLat;
  destination: LonLat;
  startT: number;
  endT: number;
  /**
   * Segments in travel order; the first and last are travelled only from the origin / to the destination
   * point. `enterT`/`exitT` (epoch ms) are when the trip really entered and left each, so the true speed
   * on a step is the metres travelled on it over that time.
   */
  route: GroundTruthStep[];
  lengthM: number;
}

export interface GroundTruthStep {
  segmentId: number;
  forward: boolean;
  enterT: number;
  exitT: number;
}

export interface SimulatedTrip {
  truth: GroundTruthTrip;
  points: GpsPoint[];
  deviceId: string;
  vehicleClass: VehicleClass;
  source: TraceSource;
}

/** A device's arrival and next departure are at least this far apart, above the ingest's 10-minute trip split. */
export const MIN_TRIP_GAP_MS = 12 * 60_000;
/** Trips whose route is shorter than this are redrawn. */
export const MIN_TRIP_M = 300;
const DESTINATION_ATTEMPTS = 8;
const DAY_MS = 86_400_000;

/** Streams simulated trips day by day, in time order per device; same network, options and seed give the same output. */
export function simulate(network: Network, opts: SimulateOptions): Iterable<SimulatedTrip> {
  return new Simulation(network, opts).trips();
}

type Place = { kind: "home" | "work" | "other"; anchor: Anchor };

interface DayState {
  place: Place;
  visitedWork: boolean;
  cameFromWork: boolean;
}

export class Simulation {
  readonly landscape: Landscape;
  readonly devices: Device[];
  readonly planner: RoutePlanner;
  private readonly destinations: Destinations;
  private readonly gravity: GravityModel;
  private readonly lastArrival: number[];

  constructor(
    network: Network,
    readonly opts: SimulateOptions,
  ) {
    validate(opts);
    this.landscape = buildLandscape(network);
    this.devices = buildPopulation(this.landscape, opts);
    this.planner = new RoutePlanner(network);
    this.destinations = new Destinations(this.landscape, opts.seed);
    this.gravity = new GravityModel(this.landscape);
    this.lastArrival = this.devices.map(() => -Infinity);
  }

  /** Start (ms, UTC midnight) of every simulated day. */
  days(): number[] {
    const [fy, fm] = this.opts.from.split("-").map(Number);
    const [ty, tm] = this.opts.to.split("-").map(Number);
    const end = Date.UTC(ty, tm, 1);
    const out: number[] = [];
    for (let t = Date.UTC(fy, fm - 1, 1); t < end; t += DAY_MS) out.push(t);
    return out;
  }

  /** The whole period's trips; each call starts the period afresh and yields the same trips. */
  *trips(): Generator<SimulatedTrip> {
    this.lastArrival.fill(-Infinity);
    for (const dayStart of this.days()) {
      const rng = new Rng(this.opts.seed, "day", new Date(dayStart).toISOString().slice(0, 10));
      const dayType = dayTypeOf(dayStart);
      for (const device of this.devices) yield* this.deviceDay(device, dayStart, dayType, rng);
    }
  }

  private *deviceDay(device: Device, dayStart: number, dayType: DayType, rng: Rng): Generator<SimulatedTrip> {
    // Drawn only when some days are unseen, so a full-presence simulation keeps its random stream.
    if (device.presence < 1 && !rng.chance(device.presence)) return;
    const n = rng.poisson(device.tripsPerDay * dayFactor(device.vehicleClass, dayType));
    const departures = Array.from({ length: n }, () =>
      departureSecond(device.vehicleClass, dayType, rng),
    ).sort((a, b) => a - b);
    const state: DayState = {
      place: { kind: "home", anchor: device.home },
      visitedWork: false,
      cameFromWork: false,
    };
    for (let k = 0; k < n; k++) {
      const planned = Math.round(dayStart / 1000 + departures[k]) * 1000;
      const startT = Math.max(
        planned,
        Math.ceil((this.lastArrival[device.index] + MIN_TRIP_GAP_MS) / 1000) * 1000,
      );
      if (startT >= dayStart + DAY_MS) break; // keeps every trip in its day, and so in its month's file
      const hour = (startT - dayStart) / 3_600_000;
      const choice = this.nextMove(device, state, hour, dayType, k === n - 1);
      const leg = this.route(device, state.place.anchor, choice, rng);
      if (!leg) continue;
      const trip = this.realise(
        device,
        state.place.anchor,
        leg,
        choice.purpose,
        startT,
        dayStart,
        dayType,
        k,
        rng,
      );
      this.lastArrival[device.index] = trip.truth.endT + dwellMs(leg.place.kind, rng);
      if (leg.place.kind === "work") state.visitedWork = true;
      state.cameFromWork = state.place.kind === "work" || (state.cameFromWork && leg.place.kind === "other");
      state.place = leg.place;
      yield trip;
    }
  }

  /** Purpose and kind of destination from where the device is, the time and whether it must head home. */
  private nextMove(device: Device, s: DayState, hour: number, day: DayType, last: boolean): Move {
    const home: Move = { purpose: "hbo", kind: "home" };
    if (device.commercial) {
      // Commercial tours: depot → stops → depot, all non-home-based work trips.
      return s.place.kind !== "home" && last
        ? { purpose: "nhbw", kind: "home" }
        : { purpose: "nhbw", kind: "other" };
    }
    const commute = device.work !== null && day === "weekday" && !s.visitedWork && hour < 13;
    switch (s.place.kind) {
      case "home":
        return commute ? { purpose: "hbw", kind: "work" } : { purpose: "hbo", kind: "other" };
      case "work":
        return last || hour >= 15 ? { purpose: "hbw", kind: "home" } : { purpose: "wbo", kind: "other" };
      case "other":
        if (last) return home;
        if (commute) return { purpose: "nhbw", kind: "work" };
        if (s.cameFromWork && device.work && hour < 15) return { purpose: "wbo", kind: "work" };
        return home;
    }
  }

  /** A route to the chosen kind of place; other places are redrawn until one is reachable and ≥ MIN_TRIP_M away. */
  private route(device: Device, from: Anchor, move: Move, rng: Rng): Leg | null {
    const profile = routingProfileOf(device.vehicleClass);
    const fixed = move.kind === "home" ? device.home : move.kind === "work" ? device.work : null;
    const attempts = fixed ? 1 : DESTINATION_ATTEMPTS;
    const candidates = this.destinations.of(device.mode);
    for (let a = 0; a < attempts; a++) {
      const to = fixed ?? this.gravity.pick(from, candidates, device.vehicleClass, rng);
      const route = this.planner.plan(from, to, profile);
      if (route && route.lengthM >= MIN_TRIP_M) return { route, place: { kind: move.kind, anchor: to } };
    }
    return null;
  }

  private realise(
    device: Device,
    from: Anchor,
    leg: Leg,
    purpose: TripPurpose,
    startT: number,
    dayStart: number,
    dayType: DayType,
    k: number,
    rng: Rng,
  ): SimulatedTrip {
    const secondsOf = travelTimer(this.landscape, device, (startT - dayStart) / 3_600_000, dayType, rng);
    const track = timedTrack(this.landscape, leg.route.steps, startT, secondsOf);
    const points = sampleTrack(this.landscape, track, device, rng);
    const segments = this.landscape.network.segments;
    const truth: GroundTruthTrip = {
      tripId: `${device.id}-${new Date(dayStart).toISOString().slice(0, 10).replaceAll("-", "")}-${k + 1}`,
      deviceId: device.id,
      vehicleClass: device.vehicleClass,
      source: device.source,
      purpose,
      incomeBand: device.incomeBand,
      origin: from.point,
      destination: leg.place.anchor.point,
      startT,
      endT: track.times[track.times.length - 1],
      route: leg.route.steps.map((s, k) => ({
        segmentId: segments[s.segmentIndex].id,
        forward: s.forward,
        enterT: track.stepStarts[k],
        exitT: track.stepStarts[k + 1] ?? track.times[track.times.length - 1],
      })),
      lengthM: Math.round(leg.route.lengthM * 10) / 10,
    };
    return { truth, points, deviceId: device.id, vehicleClass: device.vehicleClass, source: device.source };
  }
}

interface Move {
  purpose: TripPurpose;
  kind: Place["kind"];
}

interface Leg {
  route: PlannedRoute;
  place: Place;
}

/** Time spent at the destination before the device may leave again (on top of MIN_TRIP_GAP_MS). */
function dwellMs(kind: Place["kind"], rng: Rng): number {
  if (kind === "work") return rng.range(3, 8) * 3_600_000;
  return rng.exponential(kind === "home" ? 60 : 40) * 60_000;
}

/**
 * Seconds each route step takes, called in travel order. Motor vehicles drive at the segment speed
 * slowed by congestion at the moment they enter the step (by road class and time of day, see
 * `congestion`), a per-trip factor and per-step jitter; cyclists and walkers keep their own pace.
 */
function travelTimer(land: Landscape, device: Device, hour: number, day: DayType, rng: Rng) {
  const segments = land.network.segments;
  const portionM = (s: RouteStep) => Math.abs(s.to - s.from) * segments[s.segmentIndex].lengthM;
  // A missing or zero speed must not stall a trip forever.
  const speedOf = (s: RouteStep) => Math.max(3, segments[s.segmentIndex].speedKph || 30);
  if (device.mode === "bike" || device.mode === "foot") {
    const kph =
      device.mode === "bike"
        ? clamp(16 + 2.5 * rng.normal(), 10, 25)
        : clamp(4.8 + 0.5 * rng.normal(), 3.5, 6);
    return (s: RouteStep) => portionM(s) / (Math.min(kph, speedOf(s)) / 3.6) / rng.range(0.92, 1.08);
  }
  const maxKph = device.vehicleClass === "heavy_commercial" ? 80 : Infinity;
  const driver = 1 + 0.15 * Math.abs(rng.normal());
  let elapsedS = 0;
  return (s: RouteStep) => {
    const slowdown = congestion(segments[s.segmentIndex].roadClass, hour + elapsedS / 3600, day);
    const seconds =
      (portionM(s) / (Math.min(maxKph, speedOf(s)) / 3.6)) * slowdown * driver * rng.range(1, 1.2);
    elapsedS += seconds;
    return seconds;
  };
}

/**
 * Extra travel time at the worst weekday peak, by road class: the main roads that carry the commuters
 * queue, local streets hardly. Weekends get half of it.
 */
export const PEAK_DELAY: Readonly<Record<RoadClass, number>> = {
  motorway: 0.6,
  trunk: 0.6,
  primary: 0.7,
  secondary: 0.6,
  tertiary: 0.4,
  ramp: 0.5,
  unclassified: 0.15,
  residential: 0.1,
  living_street: 0.05,
  service: 0.05,
  road: 0.1,
  track: 0,
  path: 0,
  cycleway: 0,
  footway: 0,
  pedestrian: 0,
  steps: 0,
};

/**
 * Travel-time factor of motor traffic on a road class at an hour (UTC, fractional) of the day:
 * 1 + PEAK_DELAY × (personal demand of the hour / its peak)², so the rush hours slow the busy
 * roads most, midday about a quarter as much and the night runs at free flow (factor < 1.04).
 */
export function congestion(roadClass: RoadClass, hour: number, day: DayType): number {
  const load = diurnalProfile("personal", day);
  const share = load[Math.floor(hour) % 24] / Math.max(...load);
  return 1 + (day === "weekday" ? 1 : 0.5) * PEAK_DELAY[roadClass] * share * share;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function validate(opts: SimulateOptions): void {
  for (const [name, value] of [
    ["from", opts.from],
    ["to", opts.to],
  ] as const) {
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value))
      throw new EngineError("invalid_option", `${name} must be YYYY-MM, got ${value}`);
  }
  if (opts.from > opts.to)
    throw new EngineError("invalid_option", `from ${opts.from} is after to ${opts.to}`);
  if (!(opts.tripsPerDay > 0)) throw new EngineError("invalid_option", "tripsPerDay must be positive");
  if (!Number.isInteger(opts.seed)) throw new EngineError("invalid_option", "seed must be an integer");
  if (opts.devices !== undefined && !(opts.devices >= 1))
    throw new EngineError("invalid_option", "devices must be at least 1");
  if (opts.presence !== undefined && !(opts.presence > 0 && opts.presence <= 1))
    throw new EngineError("invalid_option", "presence must be in (0, 1]");
  if (opts.samplingS !== undefined && !(opts.samplingS > 0))
    throw new EngineError("invalid_option", "samplingS must be positive");
  if (opts.noiseM !== undefined && !(opts.noiseM >= 0))
    throw new EngineError("invalid_option", "noiseM must be ≥ 0");
}
