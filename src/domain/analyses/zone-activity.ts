import type { AnalysisTypeDef } from "./catalogue.js";

/**
 * Zone_Activity_Analysis: per zone of the `oz_sets`, the trips that start or end in it (or pass
 * through it, for a pass-through zone), by day type and day part. No zone-set field besides oz_sets.
 */
export const zoneActivity: AnalysisTypeDef = {
  name: "Zone_Activity_Analysis",
  zoneSets: [],
  fields: [],
  readOptions: () => ({}),
};
