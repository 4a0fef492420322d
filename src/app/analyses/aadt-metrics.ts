import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { daySpan } from "../../domain/analyses/grammar.js";
import { networkTimeZone } from "../networks.js";
import { AadtTally, type AadtResult } from "../../engine/analysis/aadt.js";
import { toCsv, type CsvValue } from "../../engine/analysis/csv.js";
import { LocalClock } from "../../engine/time.js";
import { TRACE_SOURCES } from "../../engine/trips/types.js";
import { zoneDefOf } from "../../engine/zones/compile.js";
import type { ZoneFeature } from "../../domain/records.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { aggregateOd, ALL, COMMERCIAL, featuresOf, modeOf, PERSONAL } from "./od-metrics.js";

/** Device groups of the OD scan (od-metrics.ts GROUPS): all five are tallied, three are reported. */
const GROUP_COUNT = 5;

export const AADT_TYPE_COLUMNS = [
  "zone_id",
  "zone_name",
  "zone_is_pass_through",
  "zone_direction",
  "year",
  "days_with_data",
  "aadt",
  "aadt_personal",
  "aadt_commercial",
  "calibrated",
];

export const AADT_FACTOR_COLUMNS = [
  "zone_id",
  "zone_name",
  "factor_type",
  "period",
  "average_daily_traffic",
  "factor",
];

/** Each calibration reference's share of a group: personal, medium + heavy commercial, or all. */
const SHARE_OF_GROUP: Record<number, (p: Record<string, unknown>) => number> = {
  [ALL]: () => 1,
  [PERSONAL]: (p) => Number(p.personal_traffic_ratio ?? 0),
  [COMMERCIAL]: (p) => Number(p.medium_commercial_ratio ?? 0) + Number(p.heavy_commercial_ratio ?? 0),
};

const isPassThrough = (f: ZoneFeature) => zoneDefOf(f).isPass;

/**
 * AADT: per pass-through zone and line zone of the `oz_sets`, the annual average daily traffic over the
 * stored days of `aadt_year` (AASHTO method, src/engine/analysis/aadt.ts), split into personal and
 * commercial traffic (`aadt_<suffix>`), and the month and day-of-week factors behind it
 * (`aadt_factors_<suffix>`). Zones of `oz_sets` and `az_sets` with a vehicle calibration (a counted
 * AADT / ADT, or AWDT / AADWT for weekdays) scale the estimates, per group by the zones' traffic ratios.
 */
export async function computeAadtMetrics(spec: AnalysisSpec, ctx: ComputeContext): Promise<MetricCsvs> {
  const year = spec.options?.aadtYear;
  if (year === undefined) throw new Error("the analysis has no aadt_year; create it again with one");
  const features = async (refs: AnalysisSpec["originSets"]) => await featuresOf(ctx, spec, refs);
  const referenceSets = spec.aadtSets ?? [];
  const zones = [...(await features(spec.originSets)), ...(await features(referenceSets))];
  const reported = (await features(spec.originSets)).length;
  const dataDays = await daysWithData(spec, ctx, year);
  const totalDays = dataDays.flat().reduce((a, b) => a + b, 0);
  if (totalDays === 0)
    throw new Error(`no stored trips of ${spec.travelMode} in ${year}; choose another aadt_year`);

  const tally = new AadtTally(zones.length, GROUP_COUNT);
  const clock = LocalClock.of(await networkTimeZone(ctx.store, spec.country));
  const sets = [...spec.originSets, ...referenceSets];
  const yearSpec: AnalysisSpec = {
    ...spec,
    originSets: sets,
    destinationSets: sets,
    outputType: "index",
    tripAttributes: false,
    travelerAttributes: false,
    dateRanges: [
      {
        start_date: `01/01/${year}`,
        end_date: `12/31/${year}`,
        startDay: `${year}-01-01`,
        endDay: `${year}-12-31`,
      },
    ],
    dayTypes: [{ name: "All Days", start: 1, end: 7, label: "All Days" }],
    dayParts: [{ name: "All Day", start: 0, end: 23, label: "All Day" }],
    vendor: spec.vendor && { ...spec.vendor, fifteenMinute: false },
  };
  await aggregateOd(yearSpec, ctx, (seen) => {
    const month = Number(clock.at(seen.trip.startT).day.slice(5, 7));
    for (const visit of seen.origins) {
      if (!Number.isFinite(visit.position)) continue; // a trip end, not a pass
      for (const group of seen.trip.groups)
        tally.add(visit.zone, group, month, seen.weekday, seen.trip.weight);
    }
  });
  const resultOf = (zone: number, group: number) => tally.result(zone, group, dataDays);
  const scale = calibrationScale(zones, resultOf);
  const rows: CsvValue[][] = [];
  const factorRows: CsvValue[][] = [];
  zones.slice(0, reported).forEach((f, zone) => {
    if (!isPassThrough(f)) return;
    const z = zoneDefOf(f);
    const all = resultOf(zone, ALL);
    const value = (group: number) => Math.round(resultOf(zone, group).aadt * (scale?.[group] ?? 1));
    rows.push([
      z.id,
      z.name,
      "yes",
      z.direction === null ? "N/A" : z.direction,
      year,
      totalDays,
      value(ALL),
      value(PERSONAL),
      value(COMMERCIAL),
      scale ? "yes" : "no",
    ]);
    factorRows.push(...factorsOf(z.id, z.name, year, all, scale?.[ALL] ?? 1));
  });
  const suffix = modeOf(spec).suffix;
  return {
    [`aadt_${suffix}`]: toCsv(AADT_TYPE_COLUMNS, rows),
    [`aadt_factors_${suffix}`]: toCsv(AADT_FACTOR_COLUMNS, factorRows),
  };
}

/** Days of the year with stored trips of the mode, counted per month (1..12) and ISO weekday (1..7). */
async function daysWithData(spec: AnalysisSpec, ctx: ComputeContext, year: number): Promise<number[][]> {
  const { sources } = modeOf(spec);
  const totals = await ctx.store.tripStats.dailyTotals(
    spec.country,
    spec.vehicleClasses,
    `${year}-01-01`,
    `${year}-12-31`,
    sources.length < TRACE_SOURCES.length ? sources : undefined,
  );
  const days = Array.from({ length: 13 }, () => new Array<number>(8).fill(0));
  for (const d of totals) {
    if (d.trips <= 0) continue;
    const date = new Date(`${d.day}T00:00:00Z`);
    days[date.getUTCMonth() + 1][date.getUTCDay() === 0 ? 7 : date.getUTCDay()]++;
  }
  return days;
}

/**
 * Per reported group, counted ÷ estimated traffic over the reference zones (pass-through zones with a
 * calibration_type); undefined when there is none. AWDT / AADWT counts compare with the estimate's
 * Monday-Friday average, AADT / ADT with the AADT.
 */
function calibrationScale(
  zones: ZoneFeature[],
  resultOf: (zone: number, group: number) => AadtResult,
): number[] | undefined {
  const references = zones.flatMap((f, zone) => {
    const p = f.properties;
    return isPassThrough(f) &&
      typeof p.calibration_type === "string" &&
      typeof p.calibration_value === "number"
      ? [{ zone, p, value: p.calibration_value, weekdays: /^(AWDT|AADWT)$/.test(p.calibration_type) }]
      : [];
  });
  if (references.length === 0) return undefined;
  const scale = new Array<number>(GROUP_COUNT).fill(1);
  for (const group of [ALL, PERSONAL, COMMERCIAL]) {
    let counted = 0;
    let estimated = 0;
    for (const r of references) {
      const result = resultOf(r.zone, group);
      const weekdays = result.weekday.slice(1, 6).filter((v): v is number => v !== null);
      const estimate = r.weekdays
        ? weekdays.reduce((a, b) => a + b, 0) / Math.max(1, weekdays.length)
        : result.aadt;
      counted += r.value * SHARE_OF_GROUP[group](r.p);
      estimated += estimate;
    }
    if (estimated > 0) scale[group] = counted / estimated;
    else if (group === ALL)
      throw new Error(
        "AADT calibration: no trip of the year passed the zones with calibration_type; " +
          "calibrate zones on roads the sample covers, or leave the counts out",
      );
    else scale[group] = scale[ALL];
  }
  return scale;
}

const MONTHS = ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"];

/** aadt_factors rows of a zone: each month and weekday with data, its average and AADT ÷ average. */
function factorsOf(
  id: number | null,
  name: string,
  year: number,
  r: AadtResult,
  scale: number,
): CsvValue[][] {
  const rows: CsvValue[][] = [];
  const row = (type: string, period: string, avg: number | null, factor: number | null) => {
    if (avg !== null)
      rows.push([id, name, type, period, Math.round(avg * scale), factor === null ? "N/A" : round3(factor)]);
  };
  MONTHS.forEach((m, i) => row("month", `${year}-${m}`, r.monthly[i + 1], r.monthFactors[i + 1]));
  for (let w = 1; w <= 7; w++) row("day_of_week", daySpan(w, w), r.weekday[w], r.weekdayFactors[w]);
  return rows;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
