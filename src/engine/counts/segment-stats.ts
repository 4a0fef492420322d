/**
 * Per-segment aggregates of matched trips, as the counts engine sums them and the segment-stats port
 * stores them.
 */

/** Width of a speed histogram bin (km/h); the last bin is open-ended. */
export const SPEED_BIN_KPH = 5;
export const SPEED_BINS = 40;

/**
 * A cell's detail counters by number: speed bins 0..SPEED_BINS-1, trip purposes at PURPOSE_COUNTER +
 * their code (trips/codes.ts), income bands 0..MAX_INCOME_BAND at INCOME_COUNTER + band. The packed
 * store keeps these numbers (its format 2 fixes them).
 */
export const PURPOSE_COUNTER = 64;
export const INCOME_COUNTER = 128;
export const MAX_INCOME_BAND = 255 - INCOME_COUNTER;

/**
 * One cell of the per-segment aggregates the trip pipeline maintains: trips
 * over one segment in one month, on one day of week, in one hour, one
 * direction, one vehicle class and one source. Cells are additive.
 */
export interface SegmentStatCell {
  segmentId: number;
  /** YYYY-MM */
  month: string;
  /** ISO day of week: 1 = Monday … 7 = Sunday. */
  dayOfWeek: number;
  /** Hour of day the trip entered the segment, 0..23. */
  hour: number;
  /** Along the segment's stored geometry (`with`) or against it. */
  direction: "with" | "against";
  vehicleClass: string;
  source: string;
  /** Observed (sample) trips, before expansion. */
  trips: number;
  /** Sum and count of observed traversal speeds (km/h). */
  speedSumKph: number;
  speedCount: number;
  /** Counts per SPEED_BIN_KPH bin, SPEED_BINS long (shorter arrays mean zeros). */
  speedHistogram: number[];
  /** Trips by purpose (hbw, hbo, …) and by income band, where known. */
  purposes: Record<string, number>;
  incomes: Record<string, number>;
}

/** Cells matching a query summed per segment × month. */
export type SegmentMonthStats = Omit<
  SegmentStatCell,
  "dayOfWeek" | "hour" | "direction" | "vehicleClass" | "source"
>;

/** A segment-month with nothing counted yet: the start of every sum and every new cell. */
export function emptySegmentMonth(segmentId: number, month: string): SegmentMonthStats {
  return {
    segmentId,
    month,
    trips: 0,
    speedSumKph: 0,
    speedCount: 0,
    speedHistogram: [],
    purposes: {},
    incomes: {},
  };
}
