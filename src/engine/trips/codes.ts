import type { TraceSource, TripPurpose, VehicleClass } from "./types.js";

/**
 * The numbers stored data carry for a trip's vehicle class, source and purpose: trip chunks keep
 * them in typed columns, chunk class masks as bit `1 << code`, packed segment-month cells their
 * purpose counters. Written out, never taken from list positions.
 *
 * The tables are append-only: a code, once stored, keeps its name forever. A new name takes the
 * next free code and bumps CODE_TABLE_VERSION. Stored chunks and cells record the version they
 * were written with, so a reader with an older table refuses them (StoredFormatError) instead of
 * misreading a code it does not know. test/unit/stored-formats.test.ts pins every table.
 */
export const CODE_TABLE_VERSION = 1;

export const VEHICLE_CLASS_CODES: Readonly<Record<VehicleClass, number>> = {
  personal: 0,
  medium_commercial: 1,
  heavy_commercial: 2,
  bicycle: 3,
  pedestrian: 4,
  bus: 5,
  rail: 6,
};

export const TRACE_SOURCE_CODES: Readonly<Record<TraceSource, number>> = { lbs: 0, telematics: 1 };

export const TRIP_PURPOSE_CODES: Readonly<Record<TripPurpose, number>> = { hbw: 0, hbo: 1, nhbw: 2, wbo: 3 };

/** Code → name; a code absent from the table reads as undefined (what the version check prevents). */
function inverse<K extends string>(codes: Readonly<Record<K, number>>): K[] {
  const names: K[] = [];
  for (const [name, code] of Object.entries(codes) as [K, number][]) names[code] = name;
  return names;
}

export const VEHICLE_CLASS_OF_CODE = inverse(VEHICLE_CLASS_CODES);
export const TRACE_SOURCE_OF_CODE = inverse(TRACE_SOURCE_CODES);
export const TRIP_PURPOSE_OF_CODE = inverse(TRIP_PURPOSE_CODES);

/** Stored data this version cannot read (unknown format or code table, damaged header): never guessed at. */
export class StoredFormatError extends Error {
  override name = "StoredFormatError";
}

/**
 * The code table a stored item was written with, checked before any code in it is read. (Items of
 * the first formats, written before tables were versioned, do not say: their codes are version 1's.)
 */
export function checkedCodeTable(version: number, what: string): number {
  if (!Number.isInteger(version) || version < 1)
    throw new StoredFormatError(`${what} names code table ${version}, which never existed: damaged data`);
  if (version > CODE_TABLE_VERSION)
    throw new StoredFormatError(
      `${what} uses code table ${version}, but this version of Streetflow knows tables up to ${CODE_TABLE_VERSION}: upgrade to read it`,
    );
  return version;
}

/**
 * Classes the per-segment counts tally (the segment-counts interface's vehicle, truck, bike and ped
 * modes). Bus and rail riders are zone-analysis modes only: rail runs on no road segment, and a
 * bus' riders would count one bus many times over.
 */
export const SEGMENT_COUNT_CLASSES: readonly VehicleClass[] = [
  "personal",
  "medium_commercial",
  "heavy_commercial",
  "bicycle",
  "pedestrian",
];

export const isSegmentCounted = (c: VehicleClass) => SEGMENT_COUNT_CLASSES.includes(c);
