import type { GpsPoint, MatchedTrip, RawTrip } from "../trips/types.js";
import type { MatchOutcome } from "./match-pool.js";
import {
  TRACE_SOURCE_CODES,
  TRACE_SOURCE_OF_CODE,
  TRIP_PURPOSE_CODES,
  TRIP_PURPOSE_OF_CODE,
  VEHICLE_CLASS_CODES,
  VEHICLE_CLASS_OF_CODE,
} from "../trips/codes.js";
import { grown } from "../typed-arrays.js";
import { ColumnarPathTrip } from "../trips/path-columns.js";

/**
 * Trips as they cross to and from the matching workers: the points and path steps as typed-array
 * columns; the rest of each raw trip as a small object, of each matched trip in columns too. Structured
 * cloning copies a typed array in one piece, where an object per point or step costs a serialisation
 * and an allocation each on both sides (~30 per trip). Unpacked, a trip is deep-equal to the one packed.
 */
export interface PackedRawTrips {
  /** Each trip without its points (`points` null, so the property keeps its place). */
  trips: RawTrip[];
  /** Points of trip i: offsets[i] … offsets[i + 1]. */
  offsets: Uint32Array;
  lon: Float64Array;
  lat: Float64Array;
  t: Float64Array;
  /** NaN where the point has no such property. */
  speed: Float64Array;
  heading: Float64Array;
}

export function packRawTrips(trips: RawTrip[]): PackedRawTrips {
  const n = trips.reduce((sum, trip) => sum + trip.points.length, 0);
  const packed: PackedRawTrips = {
    trips: trips.map((trip) => ({ ...trip, points: null as unknown as GpsPoint[] })),
    offsets: new Uint32Array(trips.length + 1),
    lon: new Float64Array(n),
    lat: new Float64Array(n),
    t: new Float64Array(n),
    speed: new Float64Array(n),
    heading: new Float64Array(n),
  };
  let at = 0;
  trips.forEach((trip, i) => {
    for (const p of trip.points) {
      packed.lon[at] = p.lon;
      packed.lat[at] = p.lat;
      packed.t[at] = p.t;
      packed.speed[at] = p.speed ?? NaN;
      packed.heading[at] = p.heading ?? NaN;
      at++;
    }
    packed.offsets[i + 1] = at;
  });
  return packed;
}

export function unpackRawTrips(packed: PackedRawTrips): RawTrip[] {
  return packed.trips.map((_, i) => rawTripAt(packed, i));
}

/**
 * Trip i of a packed group with its points, a new object (the packed group keeps none of them). A matching
 * worker makes each trip's points just before it matches it: made for the whole group at once, they
 * outlived a young-generation collection while the group was matched.
 */
export function rawTripAt(packed: PackedRawTrips, i: number): RawTrip {
  const points: GpsPoint[] = [];
  for (let j = packed.offsets[i]; j < packed.offsets[i + 1]; j++) {
    const point: GpsPoint = { lon: packed.lon[j], lat: packed.lat[j], t: packed.t[j] };
    if (!Number.isNaN(packed.speed[j])) point.speed = packed.speed[j];
    if (!Number.isNaN(packed.heading[j])) point.heading = packed.heading[j];
    points.push(point);
  }
  return { ...packed.trips[i], points };
}

export interface PackedOutcomes {
  /** Per outcome: how many matched trips it gave, or -1 when matching threw (its message in `errors`). */
  matchedCount: Int32Array;
  errors: string[];
  /** Per matched trip k, in outcome order: its fields (codes: trips/codes.ts; -1 and NaN where unknown). */
  deviceIds: string[];
  vehicleClass: Uint8Array;
  source: Uint8Array;
  purpose: Int8Array;
  incomeBand: Float64Array;
  /** origin lon, lat, destination lon, lat, startT, endT, lengthM: TRIP_NUMBERS per trip. */
  numbers: Float64Array;
  /** Steps of matched trip k: offsets[k] … offsets[k + 1]. */
  offsets: Uint32Array;
  segmentId: Float64Array;
  forward: Uint8Array;
  enterT: Float64Array;
  exitT: Float64Array;
}

const TRIP_NUMBERS = 7;

export function packOutcomes(outcomes: MatchOutcome[]): PackedOutcomes {
  const packer = new OutcomePacker();
  for (const outcome of outcomes) packer.add(outcome);
  return packer.done();
}

/**
 * Packs outcomes one at a time, as they are made, all in columns: a worker packs each trip just after it is
 * matched, so its path step objects die young (kept for the whole group, many were promoted), and nothing
 * crosses back as an object per trip (cloning those cost ~4 µs a trip on each side).
 */
export class OutcomePacker {
  private readonly matchedCount: number[] = [];
  private readonly errors: string[] = [];
  private readonly deviceIds: string[] = [];
  private trips = 0;
  private vehicleClass = new Uint8Array(64);
  private source = new Uint8Array(64);
  private purpose = new Int8Array(64);
  private incomeBand = new Float64Array(64);
  private numbers = new Float64Array(64 * TRIP_NUMBERS);
  private offsets = new Uint32Array(65);
  private steps = 0;
  private segmentId = new Float64Array(2048);
  private forward = new Uint8Array(2048);
  private enterT = new Float64Array(2048);
  private exitT = new Float64Array(2048);

  add(outcome: MatchOutcome): void {
    if (!("matched" in outcome)) {
      this.matchedCount.push(-1);
      this.errors.push(outcome.error);
      return;
    }
    this.matchedCount.push(outcome.matched.length);
    for (const trip of outcome.matched) this.addTrip(trip);
  }

  /** The outcomes added, columns cut to length (a view would cross threads with its whole buffer). */
  done(): PackedOutcomes {
    const [k, n] = [this.trips, this.steps];
    return {
      matchedCount: Int32Array.from(this.matchedCount),
      errors: this.errors,
      deviceIds: this.deviceIds,
      vehicleClass: this.vehicleClass.slice(0, k),
      source: this.source.slice(0, k),
      purpose: this.purpose.slice(0, k),
      incomeBand: this.incomeBand.slice(0, k),
      numbers: this.numbers.slice(0, TRIP_NUMBERS * k),
      offsets: this.offsets.slice(0, k + 1),
      segmentId: this.segmentId.slice(0, n),
      forward: this.forward.slice(0, n),
      enterT: this.enterT.slice(0, n),
      exitT: this.exitT.slice(0, n),
    };
  }

  private addTrip(trip: MatchedTrip): void {
    if (this.trips + 1 === this.offsets.length) this.growTrips();
    const k = this.trips++;
    this.deviceIds.push(trip.deviceId);
    this.vehicleClass[k] = VEHICLE_CLASS_CODES[trip.vehicleClass];
    this.source[k] = TRACE_SOURCE_CODES[trip.source];
    this.purpose[k] = trip.purpose === undefined ? -1 : TRIP_PURPOSE_CODES[trip.purpose];
    this.incomeBand[k] = trip.incomeBand ?? NaN;
    const at = TRIP_NUMBERS * k;
    const { numbers } = this;
    numbers[at] = trip.origin[0];
    numbers[at + 1] = trip.origin[1];
    numbers[at + 2] = trip.destination[0];
    numbers[at + 3] = trip.destination[1];
    numbers[at + 4] = trip.startT;
    numbers[at + 5] = trip.endT;
    numbers[at + 6] = trip.lengthM;
    if (this.steps + trip.path.length > this.segmentId.length) this.growSteps(trip.path.length);
    for (const step of trip.path) {
      const j = this.steps++;
      this.segmentId[j] = step.segmentId;
      this.forward[j] = step.forward ? 1 : 0;
      this.enterT[j] = step.enterT;
      this.exitT[j] = step.exitT;
    }
    this.offsets[k + 1] = this.steps;
  }

  private growTrips(): void {
    const size = 2 * this.trips;
    this.vehicleClass = grown(this.vehicleClass, size, this.trips);
    this.source = grown(this.source, size, this.trips);
    this.purpose = grown(this.purpose, size, this.trips);
    this.incomeBand = grown(this.incomeBand, size, this.trips);
    this.numbers = grown(this.numbers, TRIP_NUMBERS * size, TRIP_NUMBERS * this.trips);
    this.offsets = grown(this.offsets, size + 1, this.trips + 1);
  }

  private growSteps(more: number): void {
    const size = Math.max(2 * this.segmentId.length, this.steps + more);
    this.segmentId = grown(this.segmentId, size, this.steps);
    this.forward = grown(this.forward, size, this.steps);
    this.enterT = grown(this.enterT, size, this.steps);
    this.exitT = grown(this.exitT, size, this.steps);
  }
}

export function unpackOutcomes(packed: PackedOutcomes): MatchOutcome[] {
  const outcomes: MatchOutcome[] = [];
  let k = 0;
  let error = 0;
  for (const count of packed.matchedCount)
    if (count < 0) outcomes.push({ error: packed.errors[error++] });
    else {
      const matched: MatchedTrip[] = [];
      for (let i = 0; i < count; i++) matched.push(matchedTripAt(packed, k++));
      outcomes.push({ matched });
    }
  return outcomes;
}

/**
 * Matched trip k, fields in the order the matcher sets them; its path stays in the columns (ColumnarPathTrip),
 * which the trip keeps alive until it is dropped.
 */
function matchedTripAt(packed: PackedOutcomes, k: number): MatchedTrip {
  const at = TRIP_NUMBERS * k;
  const { numbers } = packed;
  const fields: Omit<MatchedTrip, "path"> = {
    deviceId: packed.deviceIds[k],
    vehicleClass: VEHICLE_CLASS_OF_CODE[packed.vehicleClass[k]],
    source: TRACE_SOURCE_OF_CODE[packed.source[k]],
    lengthM: numbers[at + 6],
    origin: [numbers[at], numbers[at + 1]],
    destination: [numbers[at + 2], numbers[at + 3]],
    startT: numbers[at + 4],
    endT: numbers[at + 5],
  };
  if (packed.purpose[k] >= 0) fields.purpose = TRIP_PURPOSE_OF_CODE[packed.purpose[k]];
  if (!Number.isNaN(packed.incomeBand[k])) fields.incomeBand = packed.incomeBand[k];
  const { offsets, segmentId, forward, enterT, exitT } = packed;
  return new ColumnarPathTrip(fields, {
    from: offsets[k],
    to: offsets[k + 1],
    segmentId,
    forward,
    enterT,
    exitT,
  });
}
