import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { networkOdPair, NetworkOdTally } from "../../engine/analysis/network-od.js";
import { odCsv } from "../../engine/analysis/od-csv.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { metricGroups } from "./catalogue-groups.js";
import { featuresOf, groupNames } from "./od-metrics.js";
import { analysedSegments, daySlicerOf, passageFinder, scanPassages } from "./segment-metrics.js";

/**
 * Network_OD: `od_<suffix>` (and `_pers` / `_comm`) in the od_* shape, between the line zones of
 * `oz_sets` and `dz_sets`: a trip counts for the origin segment it travelled first and the destination
 * segment it travelled last, sliced by when it entered the origin; avg_trip_duration is the time from
 * entering the origin segment to leaving the destination segment.
 */
export async function computeNetworkOdMetrics(spec: AnalysisSpec, ctx: ComputeContext): Promise<MetricCsvs> {
  const network = await ctx.networks.get(spec.country);
  if (!network) throw new Error(`no road network is imported for country "${spec.country}"`);
  const origins = analysedSegments(await featuresOf(ctx, spec, spec.originSets), network, []);
  const destinations = analysedSegments(await featuresOf(ctx, spec, spec.destinationSets), network, []);
  const segments = [...origins, ...destinations];
  if (segments.every((s) => s.parts.length === 0))
    throw new Error(
      "the line zones lie on no road segment of the network; draw them along roads or use osm_ids",
    );
  const passages = passageFinder(spec, network, segments);
  const slicer = await daySlicerOf(spec, ctx);
  const tally = new NetworkOdTally();
  await scanPassages(spec, ctx, network, passages, (met, trip) => {
    const pair = networkOdPair(met, origins.length);
    const slice = pair && slicer.at(pair.enterT);
    if (pair && slice) tally.add(pair, trip, slice);
  });
  const perDay = (weight: number, dayType: number) => {
    if (spec.outputType === "trip_counts") return Math.round(weight);
    const days = slicer.daysPerType[dayType];
    return days > 0 ? Math.round(weight / days) : 0;
  };
  const rows = tally.rows(perDay);
  const labels = {
    groups: groupNames(spec),
    origins: origins.map((s) => s.zone),
    destinations: destinations.map((s) => s.zone),
    dayTypes: spec.dayTypes.map((d) => d.label),
    dayParts: spec.dayParts.map((p) => p.label),
  };
  const metrics: MetricCsvs = {};
  for (const [name, groups] of metricGroups(spec, "od"))
    metrics[name] = odCsv(
      rows.filter((r) => groups.includes(r.group)),
      labels,
    );
  return metrics;
}
