import type { GpsPoint, RawTrip, TraceSource, TripPurpose, VehicleClass } from "../trips/types.js";
import { fixOf, type TracePoint } from "./types.js";

/** Fastest believable travel per vehicle class (km/h); a fix implying more is a GPS jump. */
export const MAX_SPEED_KPH: Record<VehicleClass, number> = {
  personal: 250,
  medium_commercial: 250,
  heavy_commercial: 250,
  bicycle: 60,
  pedestrian: 25,
  bus: 120,
  rail: 300,
};

export interface SplitOptions {
  source: TraceSource;
  /** Class of points whose file has no vehicle class column. */
  defaultVehicleClass: VehicleClass;
  /** A stop this long within `dwellRadiusM` ends a trip. */
  dwellMs?: number;
  dwellRadiusM?: number;
  /** This long without a fix ends a trip. */
  gapMs?: number;
  /** Trips travelling less than this are dropped. */
  minTripM?: number;
  /** Position noise allowed on top of the speed limit, so stationary jitter is not a jump. */
  jitterM?: number;
}

const DEFAULTS = { dwellMs: 5 * 60_000, dwellRadiusM: 100, gapMs: 10 * 60_000, minTripM: 200, jitterM: 20 };

/** Fixes between sweeps for devices that have gone quiet. */
const SWEEP_EVERY = 10_000;

/** What splitting kept and dropped, and why; the ingest report shows it. */
export interface SplitCounts {
  pointsRead: number;
  badRows: number;
  droppedPoints: { jump: number; outOfOrder: number; duplicate: number; dwell: number };
  droppedTrips: { tooFewPoints: number; tooShort: number; zeroDuration: number };
  trips: number;
}

export function emptySplitCounts(): SplitCounts {
  return {
    pointsRead: 0,
    badRows: 0,
    droppedPoints: { jump: 0, outOfOrder: 0, duplicate: 0, dwell: 0 },
    droppedTrips: { tooFewPoints: 0, tooShort: 0, zeroDuration: 0 },
    trips: 0,
  };
}

/** One device's open trip. */
interface DeviceState {
  vehicleClass: VehicleClass;
  /** Trip attributes of the open trip's fixes (absent when the trace has none). */
  purpose: TripPurpose | undefined;
  incomeBand: number | undefined;
  points: GpsPoint[];
  /** Last accepted fix, in or out of a trip: the reference for order, duplicates and jumps. */
  last: GpsPoint;
  /** Candidate stop point: the first fix of the current stationary stretch, at points[anchorIndex]. */
  anchorIndex: number;
  anchor: GpsPoint;
  /** After a dwell, `points` holds only the latest dwell fix: the next trip's start if the device moves. */
  dwelling: boolean;
  /** Fixes read from the input when this device's latest fix (accepted or not) came. */
  seenAt: number;
}

/**
 * Cuts a stream of fixes into trips, per device and incrementally: a trip is
 * returned as soon as it closes, so memory holds only open trips. A device's
 * fixes must come in time order; earlier ones are dropped as out of order.
 *
 * - dwell: the device stays within `dwellRadiusM` of a fix for `dwellMs` or
 *   more. That fix (the stop point) ends the trip; the next trip starts at the
 *   last fix of the stop; fixes between the two belong to no trip.
 * - gap: `gapMs` or more between two fixes ends the trip at the earlier one.
 * - a change of vehicle class, trip purpose or income band ends the trip, so
 *   a trip's fixes always agree on them.
 * - a fix with the same time as the previous one and within 1 m of it is a
 *   duplicate; a fix further from the previous one than the class's
 *   MAX_SPEED_KPH allows in the time between them (at least 1 s: timestamp
 *   resolution) plus `jitterM` is a jump. Both are dropped.
 * - closed trips with fewer than 2 fixes, under `minTripM` travelled, or
 *   lasting no time at all (all fixes in one timestamp) are dropped.
 *
 * Devices silent both in the input (no fix among the last SWEEP_EVERY read) and
 * for `gapMs` before the latest time seen in it are closed and forgotten as the
 * input goes on, so a file of many devices keeps only recently active ones in
 * memory. Time alone is not enough: in a file sorted by device, earlier devices
 * reach the month's end while the device being read is still at its start.
 * (A device whose fixes reappear later, earlier than that latest time, then
 * starts afresh.)
 */
export class TripSplitter {
  readonly counts = emptySplitCounts();
  private readonly devices = new Map<string, DeviceState>();
  private readonly opts: Required<SplitOptions>;
  /** Latest fix time seen in the input. */
  private latestT = -Infinity;

  constructor(options: SplitOptions) {
    this.opts = { ...DEFAULTS, ...options };
  }

  /** Adds one fix; returns the trips it closed (usually none). */
  push(p: TracePoint): RawTrip[] {
    const closed: RawTrip[] = [];
    this.pushFix(p.deviceId, fixOf(p), p.vehicleClass, p.purpose, p.incomeBand, closed);
    return closed;
  }

  /**
   * Adds one fix of a device, kept as it is in the trip's points (a reader's rows need no point object of
   * their own); the trips it closed are appended to `closed`.
   */
  pushFix(
    deviceId: string,
    fix: GpsPoint,
    fileClass: VehicleClass | undefined,
    purpose: TripPurpose | undefined,
    incomeBand: number | undefined,
    closed: RawTrip[],
  ): void {
    this.counts.pointsRead++;
    const vehicleClass = fileClass ?? this.opts.defaultVehicleClass;
    if (this.counts.pointsRead % SWEEP_EVERY === 0) this.closeIdle(closed);
    this.latestT = Math.max(this.latestT, fix.t);
    const st = this.devices.get(deviceId);
    if (!st) {
      this.devices.set(deviceId, newState(vehicleClass, purpose, incomeBand, fix, this.counts.pointsRead));
      return;
    }
    st.seenAt = this.counts.pointsRead;
    if (this.rejects(st, fix)) return;
    if (fix.t - st.last.t >= this.opts.gapMs || changesAttributes(st, vehicleClass, purpose, incomeBand)) {
      this.close(deviceId, st, closed);
      this.devices.set(deviceId, newState(vehicleClass, purpose, incomeBand, fix, this.counts.pointsRead));
      return;
    }
    if (this.isJump(st, fix)) {
      this.counts.droppedPoints.jump++;
      return;
    }
    st.last = fix;
    this.advance(deviceId, st, fix, closed);
  }

  /** Closes every open trip (end of input). */
  flush(): RawTrip[] {
    const closed: RawTrip[] = [];
    for (const [deviceId, st] of this.devices) this.close(deviceId, st, closed);
    this.devices.clear();
    return closed;
  }

  /**
   * Closes the trips of devices silent for a sweep's worth of input and for a gap before the latest time
   * seen: in input sorted by time or by device, no later fix can extend them.
   */
  private closeIdle(closed: RawTrip[]): void {
    for (const [deviceId, st] of this.devices) {
      if (this.counts.pointsRead - st.seenAt < SWEEP_EVERY) continue;
      if (this.latestT - st.last.t < this.opts.gapMs) continue;
      this.close(deviceId, st, closed);
      this.devices.delete(deviceId);
    }
  }

  /** Devices with an open trip or stop (memory in use). */
  get openDevices(): number {
    return this.devices.size;
  }

  /** Out-of-order and duplicate fixes, counted. */
  private rejects(st: DeviceState, fix: GpsPoint): boolean {
    if (fix.t < st.last.t) {
      this.counts.droppedPoints.outOfOrder++;
      return true;
    }
    if (fix.t === st.last.t && distanceM(st.last, fix) <= 1) {
      this.counts.droppedPoints.duplicate++;
      return true;
    }
    return false;
  }

  private isJump(st: DeviceState, fix: GpsPoint): boolean {
    // Timestamps often have whole-second resolution: two fixes in the same second may be up to a second apart.
    const seconds = Math.max(1, (fix.t - st.last.t) / 1000);
    const reachM = (MAX_SPEED_KPH[st.vehicleClass] / 3.6) * seconds;
    return distanceM(st.last, fix) > reachM + this.opts.jitterM;
  }

  /** Places an accepted fix: extends the trip, detects a dwell, or leaves one. */
  private advance(deviceId: string, st: DeviceState, fix: GpsPoint, closed: RawTrip[]): void {
    const nearAnchor = distanceM(st.anchor, fix) <= this.opts.dwellRadiusM;
    if (st.dwelling) {
      if (nearAnchor) {
        this.counts.droppedPoints.dwell++;
        st.points = [fix];
      } else {
        st.dwelling = false;
        st.points.push(fix);
        setAnchor(st);
      }
      return;
    }
    st.points.push(fix);
    if (!nearAnchor) setAnchor(st);
    else if (fix.t - st.anchor.t >= this.opts.dwellMs) {
      const stopped = st.points.slice(st.anchorIndex + 1, -1);
      this.counts.droppedPoints.dwell += stopped.length;
      st.points = st.points.slice(0, st.anchorIndex + 1);
      this.close(deviceId, st, closed, true);
      st.points = [fix];
      st.dwelling = true;
    }
  }

  /** `atStop`: the trip ends at a dwell, so a lone fix is a stationary device, not a failed trip. */
  private close(deviceId: string, st: DeviceState, closed: RawTrip[], atStop = st.dwelling): void {
    const { points } = st;
    if (points.length === 1 && atStop) {
      this.counts.droppedPoints.dwell++;
      return;
    }
    if (points.length < 2) this.counts.droppedTrips.tooFewPoints++;
    else if (pathLengthM(points) < this.opts.minTripM) this.counts.droppedTrips.tooShort++;
    else if (points.at(-1)!.t === points[0].t) this.counts.droppedTrips.zeroDuration++;
    else {
      this.counts.trips++;
      const trip: RawTrip = { deviceId, vehicleClass: st.vehicleClass, source: this.opts.source, points };
      if (st.purpose !== undefined) trip.purpose = st.purpose;
      if (st.incomeBand !== undefined) trip.incomeBand = st.incomeBand;
      closed.push(trip);
    }
  }
}

function newState(
  vehicleClass: VehicleClass,
  purpose: TripPurpose | undefined,
  incomeBand: number | undefined,
  fix: GpsPoint,
  seenAt: number,
): DeviceState {
  return {
    vehicleClass,
    purpose,
    incomeBand,
    points: [fix],
    last: fix,
    anchorIndex: 0,
    anchor: fix,
    dwelling: false,
    seenAt,
  };
}

/** A fix whose class or trip attributes differ from the open trip's starts a new trip. */
function changesAttributes(
  st: DeviceState,
  vehicleClass: VehicleClass,
  purpose: TripPurpose | undefined,
  incomeBand: number | undefined,
): boolean {
  return vehicleClass !== st.vehicleClass || purpose !== st.purpose || incomeBand !== st.incomeBand;
}

function setAnchor(st: DeviceState): void {
  st.anchorIndex = st.points.length - 1;
  st.anchor = st.points[st.anchorIndex];
}

/** Splits a whole sequence at once (tests, small inputs). */
export function splitTrips(points: Iterable<TracePoint>, options: SplitOptions) {
  const splitter = new TripSplitter(options);
  const trips: RawTrip[] = [];
  for (const p of points) trips.push(...splitter.push(p));
  trips.push(...splitter.flush());
  return { trips, counts: splitter.counts };
}

const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

/** Great-circle distance (haversine). */
export function distanceM(a: { lon: number; lat: number }, b: { lon: number; lat: number }): number {
  const dLat = (b.lat - a.lat) * RAD;
  const dLon = (b.lon - a.lon) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function pathLengthM(points: readonly GpsPoint[]): number {
  let sum = 0;
  for (let i = 1; i < points.length; i++) sum += distanceM(points[i - 1], points[i]);
  return sum;
}
