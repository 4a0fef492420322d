import { resolveGeographyType } from "../preset-geographies.js";
import { DomainError } from "../errors.js";
import type { AnalysisTypeDef, TypeRequest } from "./catalogue.js";

/**
 * Zone_Activity_Analysis: per zone of the `oz_sets`, the trips that start or end in it (or pass
 * through it, for a pass-through zone), by day type and day part. No zone-set field besides oz_sets.
 * With `enable_home_work_locations`, `geography_type` (optional) names the preset geography the
 * home and work places are reported over instead of the grid.
 */
export const zoneActivity: AnalysisTypeDef = {
  name: "Zone_Activity_Analysis",
  zoneSets: [],
  fields: ["geography_type"],
  async readOptions({ body, presetAreas, country, issues }: TypeRequest) {
    const homeWork = body.enable_home_work_locations === true;
    if (
      homeWork &&
      typeof body.travel_mode_type === "string" &&
      /^truck$/i.test(body.travel_mode_type.trim())
    )
      issues.push({
        field: "enable_home_work_locations",
        message: "home and work locations describe people; Truck analyses cannot have them",
      });
    const given = body.geography_type;
    if (given === undefined || given === null || given === "") return {};
    if (typeof given !== "string" || !homeWork) {
      issues.push({
        field: "geography_type",
        message:
          "of a Zone_Activity_Analysis is the preset geography of its home and work locations: a preset such as admin_8, with enable_home_work_locations",
      });
      return {};
    }
    if (country === null) return {};
    try {
      return { homeWorkGeography: await resolveGeographyType(presetAreas, country, given) };
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      issues.push({ field: "geography_type", message: e.message });
      return {};
    }
  },
};
