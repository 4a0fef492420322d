import type { SegmentStatsRepo, TripStatsRepo } from "../ports/store.js";
import {
  metricsOverAggregates,
  type MetricsProvider,
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

/** The metrics provider over the store's per-segment aggregates (and its per-day tallies, when given). */
export function metricsFromAggregates(stats: SegmentStatsRepo, tallies?: TripTallies): MetricsProvider {
  return metricsOverAggregates(
    async (query, details) =>
      await stats.query({
        country: query.country,
        segmentIds: query.segments.map((s) => s.id),
        months: query.months.map(monthKey),
        daysOfWeek: query.daysOfWeek,
        hours: query.hours,
        directions: query.direction === "bidirectional" ? ["with", "against"] : [query.direction],
        vehicleClasses: query.vehicleClasses,
        sources: query.sources,
        details,
      }),
    tallies,
  );
}
