import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { DEFAULT_TOP_ROUTES } from "../../domain/analyses/top-routes.js";
import { toCsv, type CsvValue } from "../../engine/analysis/csv.js";
import { TopRoutesTally, type TopRouteRow } from "../../engine/analysis/top-routes.js";
import type { CompiledZoneSet } from "../../engine/zones/compile.js";
import { metricGroups } from "./catalogue-groups.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { aggregateOd, groupNames, METRES_PER_UNIT } from "./od-metrics.js";

/** Stored with the results (not a downloadable metric): the routes the shapefile and the map draw. */
export const ROUTES_RESULT = "_routes";

/** The shapefile of an analysis' top routes (see shapefiles.ts). */
export const ROUTES_SHAPEFILE = "top_routes";

/**
 * `_routes`: each numbered route's representative path as stored segment ids (negative: travelled
 * against the segment's geometry), and one record per row of the mode's main metric.
 */
export interface StoredRoutes {
  columns: string[];
  /** Route number → signed segment ids in travel order. */
  routes: Record<string, number[]>;
  /** Per record: the route number, then the values of `columns`. */
  records: (string | number)[][];
}

/** Origin and destination zone numbers in one subject number (zones per side stay far below 2^20). */
const PAIR = 2 ** 20;

const OD_IDENTITY = [
  "device_type",
  "origin_zone_id",
  "origin_zone_name",
  "destination_zone_id",
  "destination_zone_name",
];
const ZA_IDENTITY = ["device_type", "zone_id", "zone_name", "zone_is_pass_through", "zone_direction"];
const routeColumns = (subjectTraffic: string) => [
  "day_type",
  "day_part",
  "route_rank",
  "route_id",
  "route_traffic",
  "route_share",
  subjectTraffic,
  "route_length",
  "avg_trip_duration",
  "sample_size",
];

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Top_Routes_OD (`tr_od_<suffix>`) and Top_Routes_ZA (`tr_za_<suffix>`): per zone pair (zone), device
 * group, day type and day part, the most used routes of its trips. The scan is OD_Analysis' (zone
 * assignment, day slicing by the trip's start, expansion), handing over each trip's whole matched path.
 */
export async function computeTopRoutesMetrics(spec: AnalysisSpec, ctx: ComputeContext): Promise<MetricCsvs> {
  const network = await ctx.networks.get(spec.country);
  if (!network) throw new Error(`no road network is imported for country "${spec.country}"`);
  const byZone = spec.analysisType === "Top_Routes_ZA";
  const tally = new TopRoutesTally(
    (i) => network.segments[i].lengthM,
    spec.options?.topRoutes ?? DEFAULT_TOP_ROUTES,
  );
  const scanSpec: AnalysisSpec = {
    ...spec,
    destinationSets: byZone ? spec.originSets : spec.destinationSets,
    tripAttributes: false,
    travelerAttributes: false,
  };
  const subjects = new Set<number>();
  const od = await aggregateOd(
    scanSpec,
    ctx,
    (seen) => {
      subjects.clear();
      if (byZone) for (const v of [...seen.origins, ...seen.destinations]) subjects.add(v.zone);
      else for (const [o, d] of seen.pairs) subjects.add(o * PAIR + d);
      tally.add(subjects, seen.trip, seen);
    },
    undefined,
    true,
  );
  const rows = tally.rows();
  const days = od.aggregator.dayCounts();
  const perDay = (weight: number, dayType: number) => {
    if (spec.outputType === "trip_counts") return Math.round(weight);
    return days[dayType] > 0 ? Math.round(weight / days[dayType]) : 0;
  };
  const names = groupNames(spec);
  const identity = byZone
    ? zoneIdentity(od.origins.compiled)
    : pairIdentity(od.origins.compiled, od.destinations.compiled);
  const line = (r: TopRouteRow): CsvValue[] => [
    names[r.group],
    ...identity(r.subject),
    spec.dayTypes[r.dayType].label,
    spec.dayParts[r.dayPart].label,
    r.rank,
    r.route,
    perDay(r.weight, r.dayType),
    round((100 * r.weight) / r.subjectWeight, 1),
    perDay(r.subjectWeight, r.dayType),
    round(r.lengthM / METRES_PER_UNIT[spec.unit], 2),
    round(r.avgDurationS / 60, 1),
    r.sample,
  ];
  const header = [
    ...(byZone ? ZA_IDENTITY : OD_IDENTITY),
    ...routeColumns(byZone ? "zone_traffic" : "pair_traffic"),
  ];
  const metrics: MetricCsvs = {};
  const groups = metricGroups(spec, byZone ? "tr_za" : "tr_od");
  for (const [name, wanted] of groups)
    metrics[name] = toCsv(header, rows.filter((r) => wanted.includes(r.group)).map(line));
  const main = rows.filter((r) => groups[0][1].includes(r.group));
  metrics[ROUTES_RESULT] = JSON.stringify(storedRoutes(main, byZone, identity, line, tally, network));
  return metrics;
}

type Identity = (subject: number) => CsvValue[];

function zoneIdentity(zones: CompiledZoneSet): Identity {
  return (subject) => {
    const z = zones.zones[subject];
    return [z.id, z.name, z.isPass ? "yes" : "no", z.direction === null ? "N/A" : z.direction];
  };
}

function pairIdentity(origins: CompiledZoneSet, destinations: CompiledZoneSet): Identity {
  return (subject) => {
    const o = origins.zones[Math.floor(subject / PAIR)];
    const d = destinations.zones[subject % PAIR];
    return [o.id, o.name, d.id, d.name];
  };
}

/** The shapefile's records (attribute names of at most 10 characters, as dBase keeps them). */
function storedRoutes(
  rows: TopRouteRow[],
  byZone: boolean,
  identity: Identity,
  line: (r: TopRouteRow) => CsvValue[],
  tally: TopRoutesTally,
  network: { segments: readonly { id: number }[] },
): StoredRoutes {
  const routes: Record<string, number[]> = {};
  const records = rows.map((r) => {
    routes[r.route] ??= tally
      .routePath(r.route)
      .map((s) => (s.forward ? network.segments[s.segment].id : -network.segments[s.segment].id));
    const values = line(r);
    const id = identity(r.subject);
    const [dayType, dayPart, rank, , traffic, share, , length, minutes, trips] = values.slice(1 + id.length);
    const zones = byZone ? [id[0], id[1]] : id;
    return [r.route, ...zones, dayType, dayPart, rank, traffic, share, length, minutes, trips] as (
      string | number
    )[];
  });
  return {
    columns: [
      ...(byZone ? ["zone_id", "zone_name"] : ["origin_id", "origin_nm", "dest_id", "dest_nm"]),
      "day_type",
      "day_part",
      "rank",
      "traffic",
      "share",
      "length",
      "time_min",
      "trips",
    ],
    routes,
    records,
  };
}
