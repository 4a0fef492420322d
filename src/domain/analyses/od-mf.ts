import type { AnalysisTypeDef } from "./catalogue.js";

/** A middle filter counts the trips passing it, so it must be a pass-through zone (lines always are). */
const isPassThrough = (f: { geometry: { type: string }; properties: Record<string, unknown> }) =>
  /line/i.test(f.geometry.type) || f.properties.is_pass === 1 || f.properties.is_pass === true;

/**
 * OD_MF_Analysis: trips from an origin zone (`oz_sets`) that pass a middle-filter zone (`mf_sets`)
 * and then reach a destination zone (`dz_sets`), in that order along the trip.
 */
export const odMfAnalysis: AnalysisTypeDef = {
  name: "OD_MF_Analysis",
  zoneSets: ["dz_sets", "mf_sets"],
  fields: [],
  outputTypes: ["index", "volume", "trip_counts"],
  readOptions({ sets, issues }) {
    for (const set of sets.mf_sets ?? []) {
      const plain = set.featureCollection.features.filter((f) => !isPassThrough(f));
      if (plain.length)
        issues.push({
          field: "mf_sets",
          message:
            `middle filters are pass-through zones; zone set "${set.name}" has plain zones ` +
            `(${plain.map((f) => `"${String(f.properties.name)}"`).join(", ")}): set is_pass to 1 or use line zones`,
        });
    }
    return {};
  },
};
