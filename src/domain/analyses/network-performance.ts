import type { AnalysisTypeDef } from "./catalogue.js";
import { requireLineZones } from "./network-od.js";

/**
 * Network_Performance: per road segment of the `oz_sets` line zones (osm_ids or drawn) and hour (quarter
 * hour with `enable_15min`), speeds, free-flow speed, travel time, travel time index and delay.
 */
export const networkPerformance: AnalysisTypeDef = {
  name: "Network_Performance",
  zoneSets: [],
  fields: [],
  outputTypes: ["index", "trip_counts"],
  readOptions: (request) => requireLineZones(request, "Network_Performance"),
};
