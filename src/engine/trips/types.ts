import type { AccessMode } from "../network/network.js";
import type { LonLat } from "../network/types.js";

/**
 * Vehicle classes a trace may carry; they map onto the travel modes of the data-period endpoints.
 * `bus` and `rail` are people riding them (phones on board), not the vehicles. Stored trips keep
 * a class by its code in codes.ts, not by its place in this list.
 */
export const VEHICLE_CLASSES = [
  "personal",
  "medium_commercial",
  "heavy_commercial",
  "bicycle",
  "pedestrian",
  "bus",
  "rail",
] as const;
export type VehicleClass = (typeof VEHICLE_CLASSES)[number];

/** Where a trace comes from: location-based services (phones, sparse) or vehicle telematics (regular). */
export const TRACE_SOURCES = ["lbs", "telematics"] as const;
export type TraceSource = (typeof TRACE_SOURCES)[number];

/** Trip purposes of the generator's ground truth (home-based work/other, non-home-based work, work-based other). */
export const TRIP_PURPOSES = ["hbw", "hbo", "nhbw", "wbo"] as const;
export type TripPurpose = (typeof TRIP_PURPOSES)[number];

/** One GPS fix. `t` is epoch milliseconds (UTC). */
export interface GpsPoint {
  lon: number;
  lat: number;
  t: number;
  /** m/s, when the source reports it. */
  speed?: number;
  /** Degrees clockwise from north, when the source reports it. */
  heading?: number;
}

/** A device's points between two stops, before map matching. */
export interface RawTrip {
  deviceId: string;
  vehicleClass: VehicleClass;
  source: TraceSource;
  points: GpsPoint[];
  /** From the trace's optional columns (simulated data); all points of a trip agree (the splitter cuts on a change). */
  purpose?: TripPurpose;
  incomeBand?: number;
}

/** One segment of a matched path, in travel order. */
export interface PathStep {
  segmentId: number;
  /** True when travelled along the segment's stored geometry, false against it. */
  forward: boolean;
  /** Epoch ms when the trip entered and left the segment (interpolated between fixes). */
  enterT: number;
  exitT: number;
}

/** A trip after map matching: what analyses and counts read. */
export interface MatchedTrip {
  deviceId: string;
  vehicleClass: VehicleClass;
  source: TraceSource;
  /** Matched (snapped) first and last positions. */
  origin: LonLat;
  destination: LonLat;
  startT: number;
  endT: number;
  /** Metres travelled along the matched path. */
  lengthM: number;
  path: PathStep[];
  /** Optional traveller and trip attributes (known for simulated data, unknown for real traces). */
  purpose?: TripPurpose;
  incomeBand?: number;
}

/** Which part of the network a vehicle class may use (for matching and routing). */
export function accessModeOf(vehicleClass: VehicleClass): AccessMode {
  if (vehicleClass === "bicycle") return "bike";
  if (vehicleClass === "pedestrian") return "foot";
  return "car";
}
