import type { AnalysisOptions, AnalysisTypeDef, TypeRequest } from "./catalogue.js";
import { DEFAULT_TOP_ROUTES, MAX_TOP_ROUTES } from "../../shared/vocabulary.js";

// Routes kept per zone pair (or zone), day type and day part: shared with the web client's form.
export { DEFAULT_TOP_ROUTES, MAX_TOP_ROUTES };

/**
 * `top_routes_count`: a whole number 1..MAX_TOP_ROUTES, as number or digit string; absent, empty or null
 * is the default. The vendor documents no such option, so this is Streetflow's own.
 */
function readTopRoutes({ body, issues }: TypeRequest): AnalysisOptions {
  const v = body.top_routes_count;
  if (v === undefined || v === null || v === "") return { topRoutes: DEFAULT_TOP_ROUTES };
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_TOP_ROUTES) {
    issues.push({
      field: "top_routes_count",
      message: `must be a whole number from 1 to ${MAX_TOP_ROUTES} (routes kept per zone pair or zone)`,
    });
    return {};
  }
  return { topRoutes: n };
}

/**
 * Top_Routes_OD: for each origin zone (`oz_sets`) and destination zone (`dz_sets`) pair, the most used
 * routes of the trips between them (src/engine/analysis/top-routes.ts).
 */
export const topRoutesOd: AnalysisTypeDef = {
  name: "Top_Routes_OD",
  zoneSets: ["dz_sets"],
  fields: ["top_routes_count"],
  outputTypes: ["index", "trip_counts"],
  readOptions: readTopRoutes,
};

/**
 * Top_Routes_ZA: for each zone of `oz_sets`, the most used routes of the trips that meet it (start or
 * end in it, or pass it when it is pass-through). Published clients send `dz_sets` too: accepted and
 * validated when given, but the routes are those of the `oz_sets` zones.
 */
export const topRoutesZa: AnalysisTypeDef = {
  name: "Top_Routes_ZA",
  zoneSets: [],
  optionalZoneSets: ["dz_sets"],
  fields: ["top_routes_count"],
  outputTypes: ["index", "trip_counts"],
  readOptions: readTopRoutes,
};
