import type { SegmentStatsQuery, SegmentStatsRepo, TripStatsRepo } from "../ports/store.js";
import {
  metricsOverAggregates,
  metricsTableOverAggregates,
  type MetricsProvider,
  type MetricsQuery,
  type MetricsTableProvider,
  type TripTallies,
} from "../../engine/counts/metrics.js";
import { monthKey } from "../../engine/time.js";

/**
 * Querying segment counts: the engine's metrics over the aggregates and tallies the store keeps. The
 * counts routes translate HTTP to and from this.
 */
/** The tallies as the trip store keeps them. */
export function tripTalliesOf(trips: TripStatsRepo): TripTallies {
  return {
    devicesByMonth: async (country, range) => await trips.devicesByMonth(country, range),
    daysWithTrips: async (country, classes, from, to) =>
      new Set((await trips.dailyTotals(country, classes, from, to)).map((d) => d.day)),
  };
}

/** The store's query of a metrics query (ids, month keys, directions as the store names them). */
function statsQuery(query: MetricsQuery, details: boolean): SegmentStatsQuery {
  return {
    country: query.country,
    segmentIds: query.segments.map((s) => s.id),
    months: query.months.map(monthKey),
    daysOfWeek: query.daysOfWeek,
    hours: query.hours,
    directions: query.direction === "bidirectional" ? ["with", "against"] : [query.direction],
    vehicleClasses: query.vehicleClasses,
    sources: query.sources,
    details,
  };
}

/** The metrics provider over the store's per-segment aggregates (and its per-day tallies, when given). */
export function metricsFromAggregates(stats: SegmentStatsRepo, tallies?: TripTallies): MetricsProvider {
  return metricsOverAggregates(
    async (query, details) => await stats.query(statsQuery(query, details)),
    tallies,
  );
}

/**
 * The metrics as columns, what a counts call serves: without detail fields the store hands its sums
 * over as columns too, so a year over 1,000 segments makes no object or array per row.
 */
export function metricsTableFromAggregates(
  stats: SegmentStatsRepo,
  tallies?: TripTallies,
): MetricsTableProvider {
  return metricsTableOverAggregates(
    {
      totals: async (query) => await stats.totals(statsQuery(query, false)),
      details: async (query, details) => await stats.query(statsQuery(query, details)),
    },
    tallies,
  );
}
