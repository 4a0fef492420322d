import { isoWeekday } from "../../engine/time.js";
import type { Store } from "../ports/store.js";
import type { StoredAnalysis } from "../../domain/records.js";
import { PUBLIC_STATUS } from "./lifecycle.js";
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { findTravelMode } from "../../domain/travel-modes.js";

/**
 * The coverage review of an analysis: whether its zones and data periods have
 * enough sampled trips for the metrics to mean something. A zone met by fewer
 * than MIN_ZONE_SAMPLE sampled trips over the analysed days, or a period and
 * day type without a day of data, is flagged; an analysis with a flag
 * `needs_review`, else `passed`.
 */
export const MIN_ZONE_SAMPLE = 10;

export interface SamplePeriod {
  data_period: string;
  day_type: string;
  days_with_data: number;
  /** The largest daily device count (devices are tallied per day: a lower bound of the period's devices). */
  approximate_device_count: number;
  approximate_trip_count: number;
}

/** Per requested period and day type: days with trips of the travel mode, their trips and devices. */
export async function samplePeriods(spec: AnalysisSpec, store: Store): Promise<SamplePeriod[]> {
  const periods: SamplePeriod[] = [];
  for (const range of spec.dateRanges) {
    const days = await store.tripStats.dailyTotals(
      spec.country,
      spec.vehicleClasses,
      range.startDay,
      range.endDay,
      findTravelMode(spec.travelMode)?.sources,
    );
    for (const dayType of spec.dayTypes) {
      const matching = days.filter((d) => {
        const weekday = isoWeekday(d.day);
        return d.trips > 0 && weekday >= dayType.start && weekday <= dayType.end;
      });
      periods.push({
        data_period: `${range.start_date} - ${range.end_date}`,
        day_type: dayType.label,
        days_with_data: matching.length,
        approximate_device_count: Math.max(0, ...matching.map((d) => d.devices)),
        approximate_trip_count: matching.reduce((sum, d) => sum + d.trips, 0),
      });
    }
  }
  return periods;
}

export interface ZoneSample {
  side: "origin" | "destination" | "both";
  zone_id: number | string | null;
  zone_name: string;
  /** Sampled (not expanded) trips that start, end or pass in the zone on the analysed days. */
  sample_trips: number;
}

export interface CoverageReview {
  review_status: "passed" | "needs_review";
  min_zone_sample: number;
  zones: (ZoneSample & { flagged: boolean })[];
  periods: (SamplePeriod & { flagged: boolean })[];
}

export function coverageReview(zones: ZoneSample[], periods: SamplePeriod[]): CoverageReview {
  const flaggedZones = zones.map((z) => ({ ...z, flagged: z.sample_trips < MIN_ZONE_SAMPLE }));
  const flaggedPeriods = periods.map((p) => ({ ...p, flagged: p.days_with_data === 0 }));
  const flagged = [...flaggedZones, ...flaggedPeriods].some((x) => x.flagged);
  return {
    review_status: flagged ? "needs_review" : "passed",
    min_zone_sample: MIN_ZONE_SAMPLE,
    zones: flaggedZones,
    periods: flaggedPeriods,
  };
}

/** Stored with the results under this name; names starting with `_` are not downloadable metrics. */
export const REVIEW_RESULT = "_review";

/** The review_detail answer: the computed review once Data Available, else the state it waits in. */
export async function reviewDetail(store: Store, a: StoredAnalysis) {
  const stored = a.state === "done" ? await store.analyses.result(a.uuid, REVIEW_RESULT) : null;
  const review: Omit<Partial<CoverageReview>, "review_status"> & { review_status: string } = stored
    ? (JSON.parse(stored) as CoverageReview)
    : { review_status: a.state === "queued" || a.state === "running" ? "pending" : "not_available" };
  return { name: a.name, uuid: a.uuid, analysis_status: PUBLIC_STATUS[a.state], ...review };
}
