import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { toCsv, type CsvValue } from "../../engine/analysis/csv.js";
import {
  distributionCsv,
  distributionMetrics,
  OdDistributions,
} from "../../engine/analysis/od-distributions.js";
import { ZoneActivity, zonesMet, type ZoneActivityRow } from "../../engine/analysis/zone-activity.js";
import type { VehicleClass } from "../../engine/trips/types.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { HomeWorkScan } from "./home-work-metrics.js";
import { attributeMetricName } from "./catalogue-groups.js";
import {
  aggregateOd,
  ALL,
  COMMERCIAL,
  distributionOptions,
  groupNames,
  PERSONAL,
  ZONE_ROW_COLUMNS,
} from "./od-metrics.js";

export const ZA_COLUMNS = [
  ...ZONE_ROW_COLUMNS,
  "average_daily_zone_traffic",
  "avg_trip_duration",
  "avg_trip_length",
];

const METRES_PER_UNIT = { miles: 1609.344, km: 1000 };

/**
 * Zone_Activity_Analysis: `za_all`, and `za_pers` / `za_comm` where the travel mode has those
 * vehicles; with `enable_home_work_locations`, `home_*` and `work_*` (home-work-metrics.ts). The scan is OD_Analysis' with the zone set on both sides, so zone assignment, day slicing,
 * expansion and volume calibration are the same.
 */
export async function computeZoneActivityMetrics(
  spec: AnalysisSpec,
  ctx: ComputeContext,
): Promise<MetricCsvs> {
  const activity = new ZoneActivity();
  const homeWork = await HomeWorkScan.of(spec, ctx);
  const attributes = await zoneDistributions(spec, ctx);
  const both = {
    ...spec,
    destinationSets: spec.originSets,
    tripAttributes: false,
    travelerAttributes: false,
  };
  const { aggregator, origins, scale } = await aggregateOd(
    both,
    ctx,
    (seen) => {
      activity.add(seen);
      homeWork?.watch(seen);
      // Each zone the trip meets is a "pair" (zone, 0): the OD distributions, per zone.
      attributes?.distributions.add({ ...seen, pairs: [...zonesMet(seen)].map((z) => [z, 0]) });
    },
    homeWork?.everyTrip,
  );
  const rows = activity.rows(aggregator.dayCounts(), scale);
  const names = groupNames(spec);
  const zones = origins.compiled.zones;
  const identity = (r: ZoneActivityRow): CsvValue[] => {
    const z = zones[r.zone];
    return [
      names[r.group],
      z.id,
      z.name,
      z.isPass ? "yes" : "no",
      z.direction === null ? "N/A" : z.direction,
      spec.dayTypes[r.dayType].label,
      spec.dayParts[r.dayPart].label,
    ];
  };
  const csv = (wanted: number[]) =>
    toCsv(
      ZA_COLUMNS,
      rows
        .filter((r) => wanted.includes(r.group))
        .map((r): CsvValue[] => [
          ...identity(r),
          r.traffic,
          r.avgDurationMin,
          round2(r.avgLengthM / METRES_PER_UNIT[spec.unit]),
        ]),
    );
  const metrics: MetricCsvs = { za_all: csv([ALL]) };
  const has = (c: VehicleClass) => spec.vehicleClasses.includes(c);
  if (has("personal") && spec.vehicleClasses.length > 1) metrics.za_pers = csv([PERSONAL]);
  if (has("medium_commercial") || has("heavy_commercial"))
    metrics.za_comm = csv(spec.travelMode === "Truck" ? [COMMERCIAL, 3, 4] : [COMMERCIAL]);
  if (attributes) {
    // One row per all-traffic row of za_all, as the other types' attribute metrics.
    const slices = rows
      .filter((r) => r.group === ALL)
      .map((r) => ({
        identity: identity(r),
        stats: attributes.distributions.statsAt(r.dayType, r.dayPart, r.zone, 0)!,
      }));
    for (const [name, metric] of Object.entries(attributes.wanted))
      metrics[attributeMetricName(name, "za")] = distributionCsv(ZONE_ROW_COLUMNS, slices, metric);
  }
  if (homeWork) Object.assign(metrics, await homeWork.csvs(ctx, zones, origins.features));
  return metrics;
}

/** The trip- and traveler-attribute distributions asked for, per zone; null when none is. */
async function zoneDistributions(spec: AnalysisSpec, ctx: ComputeContext) {
  if (!spec.tripAttributes && !spec.travelerAttributes) return null;
  const network = await ctx.networks.get(spec.country);
  if (!network) return null;
  const options = distributionOptions(spec, network);
  const { trip, traveler } = distributionMetrics(options, spec.unit);
  return {
    distributions: new OdDistributions(options),
    wanted: { ...(spec.tripAttributes ? trip : {}), ...(spec.travelerAttributes ? traveler : {}) },
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export type { ZoneActivityRow };
