import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { vendorOptionsOf } from "../../domain/analyses/vendor-options.js";
import { networkTimeZone } from "../networks.js";
import { toCsv, type CsvValue } from "../../engine/analysis/csv.js";
import { DaySlicer } from "../../engine/analysis/day-slicer.js";
import { NetworkPerformanceTally } from "../../engine/analysis/network-performance.js";
import { LocalClock } from "../../engine/time.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { metricGroups } from "./catalogue-groups.js";
import { featuresOf, groupNames, range } from "./od-metrics.js";
import {
  analysedSegments,
  passageFinder,
  percentilesOf,
  SA_IDENTITY_COLUMNS,
  segmentIdentity,
  scanPassages,
  speedIn,
  speedUnit,
} from "./segment-metrics.js";

const HOURS = Array.from({ length: 24 }, (_, h) => h);
const pad = (n: number) => String(n).padStart(2, "0");

/** "07:00-08:00", or "07:15-07:30" for quarter hours. */
function periodLabel(period: number, quarters: boolean): string {
  const minutes = quarters ? 15 : 60;
  const from = period * minutes;
  const to = from + minutes;
  return `${pad(Math.floor(from / 60))}:${pad(from % 60)}-${pad(Math.floor(to / 60))}:${pad(to % 60)}`;
}

/** Segment_Analysis' identity columns, the hour or quarter hour (`period`) in place of its `day_part`. */
const NP_IDENTITY_COLUMNS = [...SA_IDENTITY_COLUMNS.filter((c) => c !== "day_part"), "period"];

/** Which `metric_type` keeps a column: the identity and traffic columns are in every one. */
type ColumnKind = "identity" | "speed" | "travel_time" | "traffic";

function npColumnKinds(spec: AnalysisSpec): [string, ColumnKind][] {
  const unit = speedUnit(spec);
  return [
    ...NP_IDENTITY_COLUMNS.map((c): [string, ColumnKind] => [c, "identity"]),
    [`avg_speed_${unit}`, "speed"],
    ...percentilesOf(spec).map((p): [string, ColumnKind] => [`speed_${unit}_p${p}`, "speed"]),
    [`free_flow_speed_${unit}`, "speed"],
    ["avg_travel_time_sec", "travel_time"],
    ["travel_time_index", "travel_time"],
    ["vehicle_hours_of_delay", "travel_time"],
    ["average_daily_segment_traffic", "traffic"],
    ["sample_size", "traffic"],
  ];
}

/** Positions of the columns `metric_type` keeps (every one for `all`). */
function keptColumns(spec: AnalysisSpec): number[] {
  const metricType = spec.options?.npMetricType ?? "all";
  return npColumnKinds(spec).flatMap(([, kind], i) =>
    metricType === "all" || kind === "identity" || kind === "traffic" || kind === metricType ? [i] : [],
  );
}

export function npColumns(spec: AnalysisSpec): string[] {
  const columns = npColumnKinds(spec);
  return keptColumns(spec).map((i) => columns[i][0]);
}

/**
 * Network_Performance: `np_<suffix>` (and `_pers` / `_comm`), per line-zone segment, day type and hour
 * (quarter hour with enable_15min) of entering it: speeds from the matched step times, free-flow speed
 * (85th percentile of its night-time speeds), travel time, travel time index, vehicle hours of delay and the
 * expanded traffic of the period.
 */
export async function computeNetworkPerformanceMetrics(
  spec: AnalysisSpec,
  ctx: ComputeContext,
): Promise<MetricCsvs> {
  const network = await ctx.networks.get(spec.country);
  if (!network) throw new Error(`no road network is imported for country "${spec.country}"`);
  const segments = analysedSegments(await featuresOf(ctx, spec, spec.originSets), network, []);
  if (segments.every((s) => s.parts.length === 0))
    throw new Error(
      "the line zones lie on no road segment of the network; draw them along roads or use osm_ids",
    );
  const quarters = vendorOptionsOf(spec).fifteenMinute;
  // Day parts of one hour each: the slicer answers the day types and the local hour of a moment.
  const slicer = new DaySlicer(
    {
      dayTypes: spec.dayTypes.map((d) => ({ weekdays: range(d.start, d.end) })),
      dayParts: HOURS.map((h) => ({ startHour: h, endHour: h })),
      dateSpans: spec.dateRanges.map((r) => ({ from: r.startDay, to: r.endDay })),
    },
    LocalClock.of(await networkTimeZone(ctx.store, spec.country)),
  );
  const tally = new NetworkPerformanceTally();
  const finder = passageFinder(spec, network, segments);
  await scanPassages(spec, ctx, network, finder, (passages, trip) => {
    for (const p of passages) {
      const slice = slicer.at(p.enterT);
      if (!slice) continue;
      const hour = slice.dayParts[0];
      // Minutes within the hour are read in UTC: exact for time zones on whole-hour offsets.
      const period = quarters ? hour * 4 + Math.floor(new Date(p.enterT).getUTCMinutes() / 15) : hour;
      tally.add(p, trip, { dayTypes: slice.dayTypes, period, hour });
    }
  });
  const perDay = (value: number, dayType: number) => {
    if (spec.outputType === "trip_counts") return value;
    const days = slicer.daysPerType[dayType];
    return days > 0 ? value / days : 0;
  };
  const names = groupNames(spec);
  const speed = (ms: number | null): CsvValue => (ms === null ? "N/A" : speedIn(spec, ms));
  const round = (v: number | null, digits: number): CsvValue =>
    v === null ? "N/A" : Math.round(v * 10 ** digits) / 10 ** digits;
  const rows = tally.rows(percentilesOf(spec));
  const kept = keptColumns(spec);
  const metrics: MetricCsvs = {};
  for (const [name, groups] of metricGroups(spec, "np"))
    metrics[name] = toCsv(
      npColumns(spec),
      rows
        .filter((r) => groups.includes(r.group))
        .map((r) => {
          const row: CsvValue[] = [
            ...segmentIdentity(segments[r.segment], names[r.group], spec.dayTypes[r.dayType].label),
            periodLabel(r.period, quarters),
            speed(r.avgSpeedMs),
            ...r.percentilesMs.map(speed),
            speed(r.freeFlowMs),
            round(r.avgTravelTimeS, 1),
            round(r.travelTimeIndex, 2),
            round(r.delayHours === null ? null : perDay(r.delayHours, r.dayType), 2),
            Math.round(perDay(r.weight, r.dayType)),
            r.sample,
          ];
          return kept.map((i) => row[i]);
        }),
    );
  return metrics;
}
