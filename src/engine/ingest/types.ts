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

export const formatProblem = (p: RowProblem) => `${p.file}:${p.line}: ${p.message}`;
