/**
 * Per-segment aggregates of matched trips, as the counts engine sums them and the segment-stats port
 * stores them.
 */
import { grown } from "../typed-arrays.js";

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

/**
 * Sums per segment × month as columns (the commonest metrics call, without details): row i is segment
 * `segmentIds[i]` in month `months[month[i]]`, ordered by segment id then month. A year over 1,000
 * segments is 12,000 rows: as objects they were 1.8 MB of garbage per call, as columns a few typed arrays.
 */
export interface SegmentMonthColumns {
  length: number;
  /** The asked months (YYYY-MM), ascending, once each; `month` indexes them. */
  months: readonly string[];
  segmentIds: Float64Array;
  month: Uint16Array;
  trips: Float64Array;
  speedCount: Float64Array;
  speedSumKph: Float64Array;
}

/** Columns filled row by row, growing by doubling; `done` hands them over trimmed to the rows added. */
export class SegmentMonthColumnsBuilder {
  private n = 0;
  private segmentIds: Float64Array;
  private month: Uint16Array;
  private trips: Float64Array;
  private speedCount: Float64Array;
  private speedSumKph: Float64Array;

  constructor(
    readonly months: readonly string[],
    capacity: number,
  ) {
    const size = Math.max(16, capacity);
    this.segmentIds = new Float64Array(size);
    this.month = new Uint16Array(size);
    this.trips = new Float64Array(size);
    this.speedCount = new Float64Array(size);
    this.speedSumKph = new Float64Array(size);
  }

  add(segmentId: number, month: number, trips: number, speedCount: number, speedSumKph: number): void {
    if (this.n === this.trips.length) this.grow();
    const i = this.n++;
    this.segmentIds[i] = segmentId;
    this.month[i] = month;
    this.trips[i] = trips;
    this.speedCount[i] = speedCount;
    this.speedSumKph[i] = speedSumKph;
  }

  done(): SegmentMonthColumns {
    const n = this.n;
    return {
      length: n,
      months: this.months,
      segmentIds: this.segmentIds.subarray(0, n),
      month: this.month.subarray(0, n),
      trips: this.trips.subarray(0, n),
      speedCount: this.speedCount.subarray(0, n),
      speedSumKph: this.speedSumKph.subarray(0, n),
    };
  }

  private grow(): void {
    this.segmentIds = grown(this.segmentIds);
    this.month = grown(this.month);
    this.trips = grown(this.trips);
    this.speedCount = grown(this.speedCount);
    this.speedSumKph = grown(this.speedSumKph);
  }
}

/** Sums as objects (ordered by segment id, then month), as columns over the asked `months`. */
export function columnsOfStats(
  stats: readonly SegmentMonthStats[],
  months: readonly string[],
): SegmentMonthColumns {
  const sorted = [...new Set(months)].sort();
  const index = new Map(sorted.map((m, i) => [m, i]));
  const out = new SegmentMonthColumnsBuilder(sorted, stats.length);
  for (const s of stats) out.add(s.segmentId, index.get(s.month)!, s.trips, s.speedCount, s.speedSumKph);
  return out.done();
}
