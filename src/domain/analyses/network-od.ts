import type { AnalysisTypeDef } from "./catalogue.js";

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
  readOptions({ sets, issues }) {
    for (const field of ["oz_sets", "dz_sets"] as const)
      for (const set of sets[field] ?? []) {
        const areas = set.featureCollection.features.filter((f) => !/line/i.test(f.geometry.type));
        if (areas.length)
          issues.push({
            field,
            message:
              `Network_OD runs between road segments; zone set "${set.name}" has polygon zones ` +
              `(${areas.map((f) => `"${String(f.properties.name)}"`).join(", ")}): use osm_ids or line zones`,
          });
      }
    return {};
  },
};
