import type { AnalysisTypeDef, TypeRequest } from "./catalogue.js";
import { requireLineZones } from "./network-od.js";
import { NP_METRIC_TYPES, type NpMetricType } from "../../shared/vocabulary.js";

/**
 * `metric_type`: which figures the np_* CSVs carry besides the identity columns. The vendor documents no
 * such option publicly, so the values are Streetflow's own (docs/analyses.md, Network_Performance).
 */
export { NP_METRIC_TYPES, type NpMetricType };

/** Absent, empty or null is `all`; matched case-insensitively; anything else an issue listing the valid values. */
function readMetricType({ body, issues }: TypeRequest): NpMetricType {
  const v = body.metric_type;
  if (v === undefined || v === null || v === "") return "all";
  const found = typeof v === "string" ? NP_METRIC_TYPES.find((t) => t === v.trim().toLowerCase()) : undefined;
  if (found) return found;
  issues.push({ field: "metric_type", message: `must be one of ${NP_METRIC_TYPES.join(", ")}` });
  return "all";
}

/**
 * Network_Performance: per road segment of the `oz_sets` line zones (osm_ids or drawn) and hour (quarter
 * hour with `enable_15min`), speeds, free-flow speed, travel time, travel time index and delay.
 */
export const networkPerformance: AnalysisTypeDef = {
  name: "Network_Performance",
  zoneSets: [],
  fields: ["metric_type"],
  outputTypes: ["index", "trip_counts"],
  readOptions: (request) => ({
    ...requireLineZones(request, "Network_Performance"),
    npMetricType: readMetricType(request),
  }),
};
