import type { TraceSource, TripPurpose, VehicleClass } from "./types.js";

/**
 * The numbers stored trips carry for their vehicle class, source and purpose (trip chunks keep
 * them in typed columns, chunk class masks as bit `1 << code`). Written out rather than taken
 * from list positions: a code, once stored, keeps its meaning, and a new class gets the next
 * free code instead of shifting the others.
 */
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

/** Code → name; a code absent from the table reads as undefined (a newer store's class). */
function inverse<K extends string>(codes: Readonly<Record<K, number>>): K[] {
  const names: K[] = [];
  for (const [name, code] of Object.entries(codes) as [K, number][]) names[code] = name;
  return names;
}

export const VEHICLE_CLASS_OF_CODE = inverse(VEHICLE_CLASS_CODES);
export const TRACE_SOURCE_OF_CODE = inverse(TRACE_SOURCE_CODES);
export const TRIP_PURPOSE_OF_CODE = inverse(TRIP_PURPOSE_CODES);

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
