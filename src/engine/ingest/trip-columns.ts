import type { GpsPoint, MatchedTrip, PathStep, RawTrip } from "../trips/types.js";
import type { MatchOutcome } from "./match-pool.js";

/**
 * Trips as they cross to and from the matching workers: the points and path steps as typed-array
 * columns, the rest of each trip as a small object. Structured cloning copies a typed array in one
 * piece, where an object per point or step costs a serialisation and an allocation each on both
 * sides (~30 per trip). Unpacked, a trip is deep-equal to the one packed.
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
  return packed.trips.map((trip, i) => {
    const points: GpsPoint[] = [];
    for (let j = packed.offsets[i]; j < packed.offsets[i + 1]; j++) {
      const point: GpsPoint = { lon: packed.lon[j], lat: packed.lat[j], t: packed.t[j] };
      if (!Number.isNaN(packed.speed[j])) point.speed = packed.speed[j];
      if (!Number.isNaN(packed.heading[j])) point.heading = packed.heading[j];
      points.push(point);
    }
    trip.points = points;
    return trip;
  });
}

export interface PackedOutcomes {
  /** Each outcome, its matched trips without their paths (`path` null, so the property keeps its place). */
  outcomes: MatchOutcome[];
  /** Steps of the k-th matched trip (in outcome order): offsets[k] … offsets[k + 1]. */
  offsets: Uint32Array;
  segmentId: Float64Array;
  forward: Uint8Array;
  enterT: Float64Array;
  exitT: Float64Array;
}

const matchedOf = (o: MatchOutcome): MatchedTrip[] => ("matched" in o ? o.matched : []);

export function packOutcomes(outcomes: MatchOutcome[]): PackedOutcomes {
  const trips = outcomes.flatMap(matchedOf);
  const n = trips.reduce((sum, trip) => sum + trip.path.length, 0);
  const packed: PackedOutcomes = {
    outcomes: outcomes.map((o) =>
      "matched" in o
        ? { matched: o.matched.map((trip) => ({ ...trip, path: null as unknown as PathStep[] })) }
        : o,
    ),
    offsets: new Uint32Array(trips.length + 1),
    segmentId: new Float64Array(n),
    forward: new Uint8Array(n),
    enterT: new Float64Array(n),
    exitT: new Float64Array(n),
  };
  let at = 0;
  trips.forEach((trip, k) => {
    for (const step of trip.path) {
      packed.segmentId[at] = step.segmentId;
      packed.forward[at] = step.forward ? 1 : 0;
      packed.enterT[at] = step.enterT;
      packed.exitT[at] = step.exitT;
      at++;
    }
    packed.offsets[k + 1] = at;
  });
  return packed;
}

export function unpackOutcomes(packed: PackedOutcomes): MatchOutcome[] {
  let k = 0;
  for (const outcome of packed.outcomes)
    for (const trip of matchedOf(outcome)) {
      const path: PathStep[] = [];
      for (let j = packed.offsets[k]; j < packed.offsets[k + 1]; j++)
        path.push({
          segmentId: packed.segmentId[j],
          forward: packed.forward[j] === 1,
          enterT: packed.enterT[j],
          exitT: packed.exitT[j],
        });
      trip.path = path;
      k++;
    }
  return packed.outcomes;
}
