import type { LonLat } from "../network/types.js";
import { TRIP_PURPOSES } from "../trips/types.js";
import { toCsv, type CsvValue } from "./csv.js";
import type { ObservedTrip } from "./od-aggregate.js";

/**
 * Per O-D pair, day type and day part: how the pair's trips spread over bins
 * of duration, length, speed and circuity, over trip purposes and income
 * bands, and the pair's speed percentiles. Shares are fractions 0..1 of the
 * pair's trips for which the value is known (see docs/analyses.md).
 */
export interface DistributionOptions {
  bins: { duration: Bin[]; length: Bin[]; speed: Bin[]; circuity: Bin[] };
  /** Metres per reported length unit: 1609.344 for miles, 1000 for km. */
  metresPerUnit: number;
  /** Whole percentiles of speed to report, or null. */
  percentiles: number[] | null;
  /** Straight-line distance in metres (the network's ruler). */
  distanceM(a: LonLat, b: LonLat): number;
}

/** A value bin `[from, to)`; `to` null for an open last bin (as the request grammar parses them). */
export interface Bin {
  from: number;
  to: number | null;
}

/** Income bands the trip data carries (1 = lowest … 5 = highest); anything else is unknown. */
export const INCOME_BANDS = [1, 2, 3, 4, 5] as const;
const UNKNOWN_PURPOSE = TRIP_PURPOSES.length;
const UNKNOWN_INCOME = INCOME_BANDS.length;

/** Weighted counts of one value's bins, and of the trips for which the value is known. */
class Histogram {
  readonly counts: Float64Array;
  known = 0;
  constructor(size: number) {
    this.counts = new Float64Array(size);
  }
  add(bin: number, weight: number): void {
    this.known += weight;
    if (bin >= 0) this.counts[bin] += weight;
  }
  shares(): number[] {
    return [...this.counts].map((c) => (this.known > 0 ? roundShare(c / this.known) : 0));
  }
}

interface PairStats {
  duration: Histogram;
  length: Histogram;
  speed: Histogram;
  circuity: Histogram;
  purpose: Histogram;
  income: Histogram;
  speeds: number[];
}

const roundShare = (x: number) => Math.round(x * 1000) / 1000;

/** Index of the bin `[from, to)` holding v; -1 when v lies outside every bin. */
export function binOf(bins: readonly Bin[], v: number): number {
  for (let i = 0; i < bins.length; i++) {
    const { from, to } = bins[i];
    if (v >= from && (to === null || v < to)) return i;
  }
  return -1;
}

/** Nearest-rank percentile of ascending values. */
export function nearestRank(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The value of each distribution for one trip; null when it is not defined. */
function tripValues(seen: ObservedTrip, options: DistributionOptions) {
  const { trip } = seen;
  const minutes = (trip.endT - trip.startT) / 60_000;
  const lengthM = trip.lengthM ?? 0;
  const length = lengthM / options.metresPerUnit;
  const straightM = options.distanceM(trip.origin, trip.destination);
  return {
    minutes,
    length,
    speed: minutes > 0 ? length / (minutes / 60) : null,
    // The path is never shorter than the straight line; snapping may make it look so.
    circuity: straightM > 0 ? Math.max(1, lengthM / straightM) : null,
  };
}

export class OdDistributions {
  private readonly pairs = new Map<string, PairStats>();

  constructor(private readonly options: DistributionOptions) {}

  /** Counts one observed trip in each of its pairs and slices. */
  add(seen: ObservedTrip): void {
    if (seen.pairs.length === 0) return;
    const { bins } = this.options;
    const v = tripValues(seen, this.options);
    const weight = seen.trip.weight;
    const purpose = seen.trip.purpose ?? UNKNOWN_PURPOSE;
    const band = seen.trip.incomeBand ?? 0;
    const income = band >= 1 && band <= INCOME_BANDS.length ? band - 1 : UNKNOWN_INCOME;
    for (const dt of seen.dayTypes)
      for (const dp of seen.dayParts)
        for (const [o, d] of seen.pairs) {
          const s = this.statsOf(`${dt}|${dp}|${o}|${d}`);
          s.duration.add(binOf(bins.duration, v.minutes), weight);
          s.length.add(binOf(bins.length, v.length), weight);
          if (v.speed !== null) {
            s.speed.add(binOf(bins.speed, v.speed), weight);
            if (this.options.percentiles) s.speeds.push(v.speed);
          }
          if (v.circuity !== null) s.circuity.add(binOf(bins.circuity, v.circuity), weight);
          s.purpose.add(purpose < UNKNOWN_PURPOSE ? purpose : UNKNOWN_PURPOSE, weight);
          s.income.add(income, weight);
        }
  }

  private statsOf(key: string): PairStats {
    let s = this.pairs.get(key);
    if (!s) {
      const { bins } = this.options;
      s = {
        duration: new Histogram(bins.duration.length),
        length: new Histogram(bins.length.length),
        speed: new Histogram(bins.speed.length),
        circuity: new Histogram(bins.circuity.length),
        purpose: new Histogram(TRIP_PURPOSES.length + 1),
        income: new Histogram(INCOME_BANDS.length + 1),
        speeds: [],
      };
      this.pairs.set(key, s);
    }
    return s;
  }

  /** The pair's statistics in a slice, or undefined when no trip counted there. */
  statsAt(dayType: number, dayPart: number, origin: number, destination: number): PairStats | undefined {
    return this.pairs.get(`${dayType}|${dayPart}|${origin}|${destination}`);
  }
}

/** Column names of a bin list: `trip_duration_0_10`, …, `trip_duration_120_plus`. */
export function binColumns(prefix: string, bins: readonly Bin[]): string[] {
  return bins.map((b) => `${prefix}_${b.from}_${b.to === null ? "plus" : b.to}`);
}

export const PURPOSE_COLUMNS = [...TRIP_PURPOSES.map((p) => `purpose_${p}`), "purpose_unknown"];
export const INCOME_COLUMNS = [...INCOME_BANDS.map((b) => `income_band_${b}`), "income_unknown"];

/** One distribution metric: its columns after the pair's identity and what each row holds. */
export interface DistributionMetric {
  columns: string[];
  values(s: PairStats): CsvValue[] | null;
}

export function distributionMetrics(options: DistributionOptions, unit: "miles" | "km") {
  const { bins } = options;
  const speedUnit = unit === "km" ? "kph" : "mph";
  const shares = (pick: (s: PairStats) => Histogram) => (s: PairStats) =>
    pick(s).known > 0 ? pick(s).shares() : null;
  const trip: Record<string, DistributionMetric> = {
    od_trip_duration: {
      columns: binColumns("trip_duration", bins.duration),
      values: shares((s) => s.duration),
    },
    od_trip_length: {
      columns: binColumns(`trip_length_${unit}`, bins.length),
      values: shares((s) => s.length),
    },
    od_trip_speed: {
      columns: binColumns(`trip_speed_${speedUnit}`, bins.speed),
      values: shares((s) => s.speed),
    },
    od_trip_circuity: {
      columns: binColumns("trip_circuity", bins.circuity),
      values: shares((s) => s.circuity),
    },
  };
  const percentiles = options.percentiles;
  if (percentiles)
    trip.od_speed_percentile = {
      columns: percentiles.map((p) => `speed_${speedUnit}_p${p}`),
      values: (s) => {
        if (s.speeds.length === 0) return null;
        const sorted = [...s.speeds].sort((a, b) => a - b);
        return percentiles.map((p) => Math.round(nearestRank(sorted, p) * 10) / 10);
      },
    };
  const traveler: Record<string, DistributionMetric> = {
    od_trip_purpose: { columns: PURPOSE_COLUMNS, values: shares((s) => s.purpose) },
    od_income: { columns: INCOME_COLUMNS, values: shares((s) => s.income) },
  };
  return { trip, traveler };
}

/** Rows of a distribution metric: identity columns of each pair slice with trips, then its values. */
export function distributionCsv(
  identityColumns: readonly string[],
  slices: Iterable<{ identity: CsvValue[]; stats: PairStats }>,
  metric: DistributionMetric,
): string {
  const rows: CsvValue[][] = [];
  for (const { identity, stats } of slices) {
    const values = metric.values(stats);
    if (values) rows.push([...identity, ...values]);
  }
  return toCsv([...identityColumns, ...metric.columns], rows);
}
