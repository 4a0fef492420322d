import { resolveGeographyType } from "../preset-geographies.js";
import { DomainError } from "../errors.js";
import type { AnalysisTypeDef } from "./catalogue.js";

/**
 * OD_Preset_Geography: origins in the `oz_sets`, destinations in the areas of one preset
 * geography (boundaries imported with the country's network), given as `geography_type`.
 */
export const odPresetGeography: AnalysisTypeDef = {
  name: "OD_Preset_Geography",
  zoneSets: [],
  fields: ["geography_type"],
  async readOptions({ body, presetAreas, country, issues }) {
    const given = body.geography_type;
    if (typeof given !== "string" || given.trim() === "") {
      issues.push({
        field: "geography_type",
        message: "is required: a preset geography such as admin_8 or zip",
      });
      return {};
    }
    if (country === null) return {};
    try {
      return { geographyType: await resolveGeographyType(presetAreas, country, given) };
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      issues.push({ field: "geography_type", message: e.message });
      return {};
    }
  },
};
