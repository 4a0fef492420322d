import type { AnalysisTypeDef } from "./catalogue.js";

/**
 * Segment_Analysis: per road segment of the `oz_sets` — a line zone (drawn, or made from `osm_ids`), or
 * each network segment of the classes in `segment_types` inside a polygon zone — the traffic on it and
 * its speeds. `segment_types` is one of the vendor options (vendor-options.ts), read for every type.
 */
export const segmentAnalysis: AnalysisTypeDef = {
  name: "Segment_Analysis",
  zoneSets: [],
  fields: [],
  outputTypes: ["index", "trip_counts"],
  readOptions: () => ({}),
};
