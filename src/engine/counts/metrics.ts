import type { Direction, MetricField } from "../../shared/vocabulary.js";
import { monthlyExpansion } from "../expansion.js";
import {
  columnsOfStats,
  SPEED_BIN_KPH,
  type SegmentMonthColumns,
  type SegmentMonthStats,
} from "./segment-stats.js";
import { sliceRows, type MetricColumn, type MetricTable } from "./metric-table.js";
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

/** The same sums without details, as columns (ordered by segment id, then month). */
export type SegmentTotals = (query: MetricsQuery) => Promise<SegmentMonthColumns>;

/** A metrics computation answering with columns: what the counts use case serves. */
export type MetricsTableProvider = (query: MetricsQuery) => Promise<MetricTable>;

/**
 * The provider over the per-segment aggregates that the trip pipeline fills, as rows (the plug-in
 * shape; the table below is what is served).
 */
export function metricsOverAggregates(
  aggregatesOf: SegmentAggregates,
  tallies = NO_TALLIES,
): MetricsProvider {
  const table = metricsTableOverAggregates(
    {
      totals: async (query) => columnsOfStats(await aggregatesOf(query, false), query.months.map(monthKey)),
      details: aggregatesOf,
    },
    tallies,
  );
  return async (query) => {
    const t = await table(query);
    return sliceRows({ table: t, from: 0, to: t.length }) as MetricsRow[];
  };
}

/**
 * The metrics of a query as columns: the sums come as columns when no field needs details (a year over
 * 1,000 segments is then no object per row), else as objects, read through the same columns.
 */
export function metricsTableOverAggregates(
  read: { totals: SegmentTotals; details: SegmentAggregates },
  tallies = NO_TALLIES,
): MetricsTableProvider {
  return async (query) => {
    const details = query.fields.some((f) => DETAIL_FIELDS.has(f));
    const stats = details ? await read.details(query, true) : null;
    const sums = stats ? columnsOfStats(stats, query.months.map(monthKey)) : await read.totals(query);
    const months = await monthFactors(query, sums.months, tallies);
    const rows = rowOrder(query.segments, sums);
    const volume = new Float64Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const a = rows.sum[r];
      const m = sums.month[a];
      volume[r] = months.days[m] > 0 ? (sums.trips[a] * months.factor[m]) / months.days[m] : 0;
    }
    const ctx: ColumnContext = {
      segments: query.segments,
      sums,
      stats,
      rows,
      volume,
      firstDays: months.firstDays,
    };
    return { length: rows.length, columns: query.fields.map((f) => metricColumn(f, ctx)) };
  };
}

/** Per asked month (index into the sums' months): its expansion factor, days of the type, `YYYY-MM-01`. */
async function monthFactors(query: MetricsQuery, months: readonly string[], tallies: TripTallies) {
  const range = months.length > 0 ? { from: months[0], to: months[months.length - 1] } : null;
  const factorOf = monthlyExpansion(range ? await tallies.devicesByMonth(query.country, range) : new Map());
  const withTrips = range
    ? await tallies.daysWithTrips(query.country, query.vehicleClasses, `${range.from}-01`, `${range.to}-31`)
    : new Set<string>();
  const asked = new Map(query.months.map((m) => [monthKey(m), m]));
  return {
    factor: months.map((m) => factorOf(m)),
    // Counting a month's days walks its calendar: once per month, not per row.
    days: months.map((m) => {
      const ym = asked.get(m);
      return ym ? daysOfTypeInMonth(ym, query.daysOfWeek, withTrips) : 0;
    }),
    firstDays: months.map((m) => `${m}-01`),
  };
}

/** The answer's rows: for each selected segment in order, its sums' rows (months ascending). */
interface RowOrder {
  length: number;
  /** Row r's index in the sums, and its segment's index in the selection. */
  sum: Int32Array;
  segment: Int32Array;
}

function rowOrder(segments: readonly Segment[], sums: SegmentMonthColumns): RowOrder {
  const sum = new Int32Array(sums.length);
  const segment = new Int32Array(sums.length);
  const ids = sums.segmentIds;
  let sorted = true;
  for (let i = 1; i < sums.length && sorted; i++) sorted = ids[i - 1] <= ids[i];
  // Each segment's rows as a chain of indexes (sums of a plug-in may come in any order).
  const firstOf = sorted ? null : new Map<number, number>();
  const nextOf = sorted ? null : new Int32Array(sums.length);
  if (firstOf && nextOf)
    for (let i = sums.length - 1; i >= 0; i--) {
      nextOf[i] = firstOf.get(ids[i]) ?? -1;
      firstOf.set(ids[i], i);
    }
  let [n, s] = [0, 0];
  const at = (a: number) => {
    sum[n] = a;
    segment[n++] = s;
  };
  for (; s < segments.length; s++) {
    const id = segments[s].id;
    if (firstOf && nextOf) for (let a = firstOf.get(id) ?? -1; a >= 0; a = nextOf[a]) at(a);
    else for (let a = lowerBound(ids, id); a < ids.length && ids[a] === id; a++) at(a);
  }
  return { length: n, sum: sum.subarray(0, n), segment: segment.subarray(0, n) };
}

/** The first index whose value is not below `x` (values ascending). */
function lowerBound(values: Float64Array, x: number): number {
  let [lo, hi] = [0, values.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface ColumnContext {
  segments: readonly Segment[];
  sums: SegmentMonthColumns;
  /** The sums as objects, when details were read (same order as `sums`). */
  stats: readonly SegmentMonthStats[] | null;
  rows: RowOrder;
  /** Row r's average trips per day of the requested type in its month, expanded. */
  volume: Float64Array;
  firstDays: string[];
}

/**
 * One column per field, each a plain loop over the rows: through one shared helper taking a closure per
 * field, the call site went megamorphic, each value came back boxed, and a year's 12,000 rows cost ~3 ms
 * and ~270 KB of garbage.
 */
function metricColumn(field: MetricField, ctx: ColumnContext): MetricColumn {
  const { segments, sums, stats, rows, volume } = ctx;
  const n = rows.length;
  const values = new Float64Array(n);
  switch (field) {
    case "year_month": {
      const ids = new Uint32Array(n);
      for (let r = 0; r < n; r++) ids[r] = sums.month[rows.sum[r]];
      return { kind: "text", dict: ctx.firstDays, ids };
    }
    case "road_class":
      return textColumn(n, (r) => segments[rows.segment[r]].roadClass);
    case "trip_purpose":
      return {
        kind: "any",
        values: Array.from({ length: n }, (_, r) => shares(stats![rows.sum[r]].purposes)),
      };
    case "income":
      return {
        kind: "any",
        values: Array.from({ length: n }, (_, r) => shares(stats![rows.sum[r]].incomes)),
      };
    case "segment_id":
      for (let r = 0; r < n; r++) values[r] = segments[rows.segment[r]].id;
      break;
    case "segment_length":
      for (let r = 0; r < n; r++) values[r] = round(segments[rows.segment[r]].lengthM / METRES_PER_MILE, 4);
      break;
    case "trips_sample_count":
      for (let r = 0; r < n; r++) values[r] = sums.trips[rows.sum[r]];
      break;
    case "trips_volume":
      for (let r = 0; r < n; r++) values[r] = Math.round(volume[r]);
      break;
    case "vmt":
      for (let r = 0; r < n; r++)
        values[r] = round((volume[r] * segments[rows.segment[r]].lengthM) / METRES_PER_MILE, 2);
      break;
    case "avg_speed":
      for (let r = 0; r < n; r++) {
        const a = rows.sum[r];
        const count = sums.speedCount[a];
        // NaN: null in the answer.
        values[r] = count > 0 ? round(sums.speedSumKph[a] / count / KPH_PER_MPH, 1) : NaN;
      }
      break;
    case "free_flow_speed":
      for (let r = 0; r < n; r++) {
        const kph = histogramPercentile(stats![rows.sum[r]].speedHistogram, FREE_FLOW_PERCENTILE);
        values[r] = kph === null ? NaN : round(kph / KPH_PER_MPH, 1);
      }
      break;
  }
  return { kind: "number", values };
}

function textColumn(length: number, value: (r: number) => string): MetricColumn {
  const index = new Map<string, number>();
  const ids = new Uint32Array(length);
  for (let r = 0; r < length; r++) {
    const v = value(r);
    let id = index.get(v);
    if (id === undefined) index.set(v, (id = index.size));
    ids[r] = id;
  }
  return { kind: "text", dict: [...index.keys()], ids };
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
