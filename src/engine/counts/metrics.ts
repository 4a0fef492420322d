import type { Direction, MetricField } from "../../shared/vocabulary.js";
import { monthlyExpansion } from "../expansion.js";
import { SPEED_BIN_KPH, type SegmentMonthStats } from "./segment-stats.js";
import type { YearMonth } from "../time.js";
import type { Segment } from "../network/types.js";
import { isoWeekday, monthKey } from "../time.js";

/** What a metrics computation is asked: the selected segments (in answer order) and resolved filters. */
export interface MetricsQuery {
  country: string;
  segments: Segment[];
  /** Requested columns, in request order; every row has one value per field. */
  fields: MetricField[];
  months: YearMonth[];
  /** ISO days of week (1 = Monday) and hours (0..23) the day type and day part cover. */
  daysOfWeek: readonly number[];
  hours: readonly number[];
  direction: Direction;
  vehicleClasses: readonly string[];
  sources: readonly string[];
}

export type MetricValue = number | string | Record<string, number> | null;
/** One segment × month with data; values in the order of `MetricsQuery.fields`. */
export type MetricsRow = MetricValue[];

/**
 * The plug-in point of the metrics endpoint. Rows: one per selected segment
 * and month that has data, segments in selection order, months ascending;
 * segments without data in the period produce none.
 */
export type MetricsProvider = (query: MetricsQuery) => Promise<Iterable<MetricsRow>> | Iterable<MetricsRow>;

const METRES_PER_MILE = 1609.344;
const KPH_PER_MPH = 1.609344;
/** Free-flow speed is read as this percentile of observed speeds. */
const FREE_FLOW_PERCENTILE = 0.85;

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Days of the month falling on the given ISO days of week: those with stored trips when `withTrips` is
 * given and the month has any, else every calendar day. A month the data covers only in part (ingest began
 * or ended inside it) is then averaged over the days it has, not read low.
 */
export function daysOfTypeInMonth(
  m: YearMonth,
  daysOfWeek: readonly number[],
  withTrips?: ReadonlySet<string>,
): number {
  const days = new Date(Date.UTC(m.year, m.month, 0)).getUTCDate();
  const month = monthKey(m);
  const calendar: string[] = [];
  for (let d = 1; d <= days; d++) {
    if (daysOfWeek.includes(isoWeekday(new Date(Date.UTC(m.year, m.month - 1, d)))))
      calendar.push(`${month}-${String(d).padStart(2, "0")}`);
  }
  const covered = withTrips ? calendar.filter((day) => withTrips.has(day)).length : 0;
  // No day of the type with trips (tallies absent, or filed a UTC day off the local one): the calendar.
  return covered > 0 ? covered : calendar.length;
}

/** What the provider reads besides the segment aggregates: the trip store's per-day tallies. */
export interface TripTallies {
  /** Distinct devices per month (YYYY-MM), for the sample expansion. */
  devicesByMonth(country: string, range: { from: string; to: string }): Promise<Map<string, number>>;
  /** Days (YYYY-MM-DD) from..to with stored trips of the vehicle classes. */
  daysWithTrips(
    country: string,
    vehicleClasses: readonly string[],
    from: string,
    to: string,
  ): Promise<Set<string>>;
}

const NO_TALLIES: TripTallies = {
  devicesByMonth: async () => new Map(),
  daysWithTrips: async () => new Set(),
};

/** Fields that need the per-cell histograms and shares, not just the totals. */
const DETAIL_FIELDS = new Set<MetricField>(["free_flow_speed", "trip_purpose", "income"]);

/** What the provider asks of the per-segment aggregates: sums per segment × month matching the query. */
export type SegmentAggregates = (query: MetricsQuery, details: boolean) => Promise<SegmentMonthStats[]>;

/** The provider over the per-segment aggregates that the trip pipeline fills. */
export function metricsOverAggregates(
  aggregatesOf: SegmentAggregates,
  tallies = NO_TALLIES,
): MetricsProvider {
  return async (query) => {
    const aggregates = await aggregatesOf(
      query,
      query.fields.some((f) => DETAIL_FIELDS.has(f)),
    );
    // Each segment's aggregates as a chain of indexes, in their order: no array per segment.
    const firstOf = new Map<number, number>();
    const nextOf = new Int32Array(aggregates.length);
    for (let i = aggregates.length - 1; i >= 0; i--) {
      nextOf[i] = firstOf.get(aggregates[i].segmentId) ?? -1;
      firstOf.set(aggregates[i].segmentId, i);
    }
    const months = query.months.map(monthKey).sort();
    const range = months.length > 0 ? { from: months[0], to: months[months.length - 1] } : null;
    const factorOf = monthlyExpansion(range ? await tallies.devicesByMonth(query.country, range) : new Map());
    const withTrips = range
      ? await tallies.daysWithTrips(query.country, query.vehicleClasses, `${range.from}-01`, `${range.to}-31`)
      : new Set<string>();
    // Per month, not per row: counting a month's days walks its calendar.
    const daysOf = new Map(
      query.months.map((m) => [monthKey(m), daysOfTypeInMonth(m, query.daysOfWeek, withTrips)]),
    );
    // One `YYYY-MM-01` string per month, not one per row (a year over 1,000 segments is 12,000 rows).
    const firstDays = new Map(months.map((m) => [m, `${m}-01`]));
    const { fields } = query;
    const rows: MetricsRow[] = [];
    for (const segment of query.segments)
      for (let a = firstOf.get(segment.id) ?? -1; a >= 0; a = nextOf[a]) {
        const stat = aggregates[a];
        const days = daysOf.get(stat.month) ?? 0;
        const volume = days > 0 ? (stat.trips * factorOf(stat.month)) / days : 0;
        const firstDay = firstDays.get(stat.month) ?? `${stat.month}-01`;
        const row = new Array<MetricValue>(fields.length);
        for (let i = 0; i < fields.length; i++)
          row[i] = metricValue(fields[i], segment, stat, volume, firstDay);
        rows.push(row);
      }
    return rows;
  };
}

/** `dailyVolume`: average trips per day of the requested day type in the row's month, expanded. */
function metricValue(
  field: MetricField,
  segment: Segment,
  stat: SegmentMonthStats,
  dailyVolume: number,
  firstDay: string,
): MetricValue {
  switch (field) {
    case "segment_id":
      return segment.id;
    case "year_month":
      return firstDay;
    case "road_class":
      return segment.roadClass;
    case "segment_length":
      return round(segment.lengthM / METRES_PER_MILE, 4);
    case "trips_sample_count":
      return stat.trips;
    case "trips_volume":
      return Math.round(dailyVolume);
    case "vmt":
      return round((dailyVolume * segment.lengthM) / METRES_PER_MILE, 2);
    case "avg_speed":
      return stat.speedCount > 0 ? round(stat.speedSumKph / stat.speedCount / KPH_PER_MPH, 1) : null;
    case "free_flow_speed": {
      const kph = histogramPercentile(stat.speedHistogram, FREE_FLOW_PERCENTILE);
      return kph === null ? null : round(kph / KPH_PER_MPH, 1);
    }
    case "trip_purpose":
      return shares(stat.purposes);
    case "income":
      return shares(stat.incomes);
  }
}

/** Percentile of a binned distribution, interpolated linearly inside the bin (km/h). */
export function histogramPercentile(histogram: number[], p: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const target = p * total;
  let below = 0;
  for (let i = 0; i < histogram.length; i++) {
    const n = histogram[i] ?? 0;
    if (n > 0 && below + n >= target) return (i + (target - below) / n) * SPEED_BIN_KPH;
    below += n;
  }
  return histogram.length * SPEED_BIN_KPH;
}

/** Shares of trips per category (3 decimals); null when nothing is known. */
function shares(counts: Record<string, number>): Record<string, number> | null {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  return Object.fromEntries(
    Object.keys(counts)
      .sort()
      .map((k) => [k, round(counts[k] / total, 3)]),
  );
}
