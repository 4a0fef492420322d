import type { GpsPoint, TripPurpose, VehicleClass } from "../trips/types.js";

/** One fix as read from a trace file, before trip splitting. */
export interface TracePoint extends GpsPoint {
  deviceId: string;
  /** From the file's own column; the caller's default applies when absent. */
  vehicleClass?: VehicleClass;
  /** Optional trip attributes (simulated traces carry them); a change ends the trip. */
  purpose?: TripPurpose;
  incomeBand?: number;
}

/** A row that could not be read; reading goes on with the next one. */
export interface RowProblem {
  /** File name as given to the reader (its base name in messages). */
  file: string;
  /** 1-based line in the (decompressed) file. */
  line: number;
  message: string;
}

/** What a reader yields: a point or the problem of one bad row. */
export type TraceRecord =
  { point: TracePoint; problem?: undefined } | { point?: undefined; problem: RowProblem };

/**
 * Where a reader can hand its rows without an object per row: each point as its fix (the GpsPoint a trip
 * keeps) and its device and trip attributes. `stopped` is asked before each row.
 */
export interface TraceRowSink {
  readonly stopped: boolean;
  point(
    deviceId: string,
    fix: GpsPoint,
    vehicleClass: VehicleClass | undefined,
    purpose: TripPurpose | undefined,
    incomeBand: number | undefined,
  ): void;
  problem(problem: RowProblem): void;
}

/**
 * A reader's batch of records. A reader may also hand its rows to a sink directly (`eachRow`): the same
 * points and problems, in the same order, as iterating gives.
 */
export interface TraceBatch extends Iterable<TraceRecord> {
  eachRow?(sink: TraceRowSink): void;
}

/**
 * A read point's fix as a trip keeps it: position and time, then speed and heading when read (one shape per
 * set). Every reader's fixes are made here, so they share one shape.
 */
export function fixOf(p: GpsPoint): GpsPoint {
  const fix: GpsPoint = { lon: p.lon, lat: p.lat, t: p.t };
  if (p.speed !== undefined) fix.speed = p.speed;
  if (p.heading !== undefined) fix.heading = p.heading;
  return fix;
}

/** A record handed to a sink as a reader's `eachRow` hands it. */
export function handRecord(sink: TraceRowSink, record: TraceRecord): void {
  if (record.problem) sink.problem(record.problem);
  else {
    const p = record.point;
    sink.point(p.deviceId, fixOf(p), p.vehicleClass, p.purpose, p.incomeBand);
  }
}

export const formatProblem = (p: RowProblem) => `${p.file}:${p.line}: ${p.message}`;
