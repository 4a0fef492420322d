import type { AnalysisSpec, ZoneSetRef } from "../../domain/analyses/spec.js";
import { toCsv, type CsvValue } from "../../engine/analysis/csv.js";
import { OdMfTally, type MfRole, type OdMfRow } from "../../engine/analysis/od-mf.js";
import {
  distributionCsv,
  distributionMetrics,
  OdDistributions,
} from "../../engine/analysis/od-distributions.js";
import type { ZoneDef } from "../../engine/zones/compile.js";
import type { Store } from "../ports/store.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { attributeMetricName, metricGroups } from "./catalogue-groups.js";
import { aggregateOd, ALL, distributionOptions, groupNames, modeOf } from "./od-metrics.js";

const zoneColumns = (prefix: string, passThrough = true) => [
  `${prefix}_zone_id`,
  `${prefix}_zone_name`,
  ...(passThrough ? [`${prefix}_zone_is_pass_through`] : []),
  `${prefix}_zone_direction`,
];

/** Columns naming an od_mf row; middle filters are always pass-through, so they carry no such column. */
export const OD_MF_IDENTITY_COLUMNS = [
  "device_type",
  ...zoneColumns("origin"),
  ...zoneColumns("middle_filter", false),
  ...zoneColumns("destination"),
  "day_type",
  "day_part",
];

export const OD_MF_COLUMNS = [
  ...OD_MF_IDENTITY_COLUMNS,
  "o_m_d_traffic",
  "origin_zone_traffic",
  "middle_filter_zone_traffic",
  "destination_zone_traffic",
  "avg_trip_duration",
];

export const ZONE_OD_MF_COLUMNS = [
  "device_type",
  "zone_type",
  "zone_id",
  "zone_name",
  "zone_is_pass_through",
  "zone_direction",
  "day_type",
  "day_part",
  "zone_traffic",
];

const ROLE_NAMES: Record<MfRole, string> = {
  origin: "Origin",
  middle: "Middle Filter",
  destination: "Destination",
};

const direction = (z: ZoneDef): CsvValue => (z.direction === null ? "N/A" : z.direction);
const yesNo = (b: boolean) => (b ? "yes" : "no");

async function zoneCount(store: Store, orgId: string, refs: ZoneSetRef[]): Promise<number> {
  let n = 0;
  for (const ref of refs)
    n += (await store.zoneSets.get(orgId, ref.uuid))?.featureCollection.features.length ?? 0;
  return n;
}

/**
 * OD_MF_Analysis: `od_mf_<suffix>` (and `_pers` / `_comm` as od_* has them), `zone_od_mf_<suffix>`, and the
 * attribute metrics (`od_mf_trip_duration`, …) per triple. One OD scan whose origin side is the origin
 * zones then the middle filters and whose destination side is the destination zones then the middle
 * filters, so it sees every trip that meets any of them; expansion, slicing and calibration are OD_Analysis'.
 */
export async function computeOdMfMetrics(spec: AnalysisSpec, ctx: ComputeContext): Promise<MetricCsvs> {
  const middleSets = spec.middleFilterSets ?? [];
  const tally = new OdMfTally({
    origins: await zoneCount(ctx.store, spec.orgId, spec.originSets),
    middles: await zoneCount(ctx.store, spec.orgId, middleSets),
    destinations: await zoneCount(ctx.store, spec.orgId, spec.destinationSets),
  });
  const { destinations: nD } = tally.layout;
  const attributes = spec.tripAttributes || spec.travelerAttributes;
  const network = await ctx.networks.get(spec.country);
  const options = network ? distributionOptions(spec, network) : null;
  const distributions = attributes && options ? new OdDistributions(options) : null;
  const combined: AnalysisSpec = {
    ...spec,
    originSets: [...spec.originSets, ...middleSets],
    destinationSets: [...spec.destinationSets, ...middleSets],
    tripAttributes: false,
    travelerAttributes: false,
    vendor: spec.vendor && { ...spec.vendor, fifteenMinute: false },
  };
  const od = await aggregateOd(combined, ctx, (seen) => {
    const triples = tally.add(seen);
    // A triple is kept as the pair (origin, middle × destination count + destination).
    if (distributions && triples.length)
      distributions.add({ ...seen, pairs: triples.map(([o, m, d]) => [o, m * nD + d]) });
  });
  const zones = {
    origin: od.origins.compiled.zones.slice(0, tally.layout.origins),
    middle: od.origins.compiled.zones.slice(tally.layout.origins),
    destination: od.destinations.compiled.zones.slice(0, nD),
  };
  const names = groupNames(spec);
  const perDay = (weight: number, group: number, dayType: number) =>
    od.aggregator.perDay(weight * (od.scale?.[group] ?? 1), dayType);
  const identity = (
    r: Pick<OdMfRow, "group" | "origin" | "middle" | "destination" | "dayType" | "dayPart">,
  ) => {
    const [o, m, d] = [zones.origin[r.origin], zones.middle[r.middle], zones.destination[r.destination]];
    return [
      names[r.group],
      o.id,
      o.name,
      yesNo(o.isPass),
      direction(o),
      m.id,
      m.name,
      direction(m),
      d.id,
      d.name,
      yesNo(d.isPass),
      direction(d),
      spec.dayTypes[r.dayType].label,
      spec.dayParts[r.dayPart].label,
    ];
  };
  const rows = tally.rows();
  const zoneTraffic = (role: MfRole, zone: number, r: OdMfRow) =>
    perDay(tally.zoneWeight(role, zone, r.group, r.dayType, r.dayPart), r.group, r.dayType);
  const metrics: MetricCsvs = {};
  for (const [name, groups] of metricGroups(spec, "od_mf"))
    metrics[name] = toCsv(
      OD_MF_COLUMNS,
      rows
        .filter((r) => groups.includes(r.group))
        .map((r) => [
          ...identity(r),
          perDay(r.weight, r.group, r.dayType),
          zoneTraffic("origin", r.origin, r),
          zoneTraffic("middle", r.middle, r),
          zoneTraffic("destination", r.destination, r),
          r.avgDurationMin,
        ]),
    );
  metrics[`zone_od_mf_${modeOf(spec).suffix}`] = zoneTrafficCsv(spec, names, zones, (role, zone, dt, dp) =>
    perDay(tally.zoneWeight(role, zone, ALL, dt, dp), ALL, dt),
  );
  if (distributions && options) {
    const { trip, traveler } = distributionMetrics(options, spec.unit);
    const wanted = { ...(spec.tripAttributes ? trip : {}), ...(spec.travelerAttributes ? traveler : {}) };
    const slices = rows
      .filter((r) => r.group === ALL)
      .map((r) => ({
        identity: identity(r),
        stats: distributions.statsAt(r.dayType, r.dayPart, r.origin, r.middle * nD + r.destination)!,
      }));
    for (const [name, metric] of Object.entries(wanted))
      metrics[attributeMetricName(name, "od_mf")] = distributionCsv(OD_MF_IDENTITY_COLUMNS, slices, metric);
  }
  return metrics;
}

/** zone_od_mf_all: every zone in its role (origins, middle filters, destinations), per day type and part. */
function zoneTrafficCsv(
  spec: AnalysisSpec,
  names: string[],
  zones: Record<MfRole, ZoneDef[]>,
  traffic: (role: MfRole, zone: number, dayType: number, dayPart: number) => number,
): string {
  const rows: CsvValue[][] = [];
  spec.dayTypes.forEach((dayType, dt) => {
    for (const role of ["origin", "middle", "destination"] as const)
      zones[role].forEach((z, zone) =>
        spec.dayParts.forEach((dayPart, dp) =>
          rows.push([
            names[ALL],
            ROLE_NAMES[role],
            z.id,
            z.name,
            yesNo(z.isPass),
            direction(z),
            dayType.label,
            dayPart.label,
            traffic(role, zone, dt, dp),
          ]),
        ),
      );
  });
  return toCsv(ZONE_OD_MF_COLUMNS, rows);
}
