import type { AnalysisTypeDef } from "./catalogue.js";

/** Clients write the year as a number or as a four-digit string. */
function parseYear(v: unknown): number | null {
  const year =
    typeof v === "number" ? v : typeof v === "string" && /^\d{4}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(year) && year >= 2000 && year <= 2099 ? year : null;
}

const hasPassThrough = (features: { geometry: { type: string }; properties: Record<string, unknown> }[]) =>
  features.some(
    (f) => /line/i.test(f.geometry.type) || f.properties.is_pass === 1 || f.properties.is_pass === true,
  );

/**
 * AADT: annual average daily traffic of each pass-through zone or line zone of the `oz_sets`, over the
 * stored days of `aadt_year`. `az_sets` holds the AADT reference zones: pass-through zones whose
 * calibration_type / calibration_value (a counted AADT) calibrate the estimates.
 */
export const aadtAnalysis: AnalysisTypeDef = {
  name: "AADT",
  zoneSets: ["az_sets"],
  fields: ["aadt_year"],
  outputTypes: ["index", "volume", "aadt"],
  readOptions({ body, sets, issues }) {
    const year = parseYear(body.aadt_year);
    if (year === null)
      issues.push({ field: "aadt_year", message: "is required: a four-digit year from 2000 to 2099" });
    const origins = sets.oz_sets ?? [];
    if (origins.length && !hasPassThrough(origins.flatMap((s) => s.featureCollection.features)))
      issues.push({
        field: "oz_sets",
        message: "AADT is computed on pass-through zones and line zones; the zone sets have none",
      });
    return year === null ? {} : { aadtYear: year };
  },
};
