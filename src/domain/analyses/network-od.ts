import type { AnalysisOptions, AnalysisTypeDef, TypeRequest } from "./catalogue.js";

/**
 * Network_OD: origin-destination between road segments. `oz_sets` and `dz_sets` hold line zones (made
 * from `osm_ids`, or drawn along roads); a trip's origin is the first origin segment it travels, its
 * destination the last destination segment.
 */
export const networkOd: AnalysisTypeDef = {
  name: "Network_OD",
  zoneSets: ["dz_sets"],
  fields: [],
  outputTypes: ["index", "trip_counts"],
  readOptions: (request) => requireLineZones(request, "Network_OD"),
};

/** Network types run on road segments: every zone of their sets must be a line (osm_ids or drawn). */
export function requireLineZones({ sets, issues }: TypeRequest, type: string): AnalysisOptions {
  for (const field of ["oz_sets", "dz_sets"] as const)
    for (const set of sets[field] ?? []) {
      const areas = set.featureCollection.features.filter((f) => !/line/i.test(f.geometry.type));
      if (areas.length)
        issues.push({
          field,
          message:
            `${type} runs on road segments; zone set "${set.name}" has polygon zones ` +
            `(${areas.map((f) => `"${String(f.properties.name)}"`).join(", ")}): use osm_ids or line zones`,
        });
    }
  return {};
}
