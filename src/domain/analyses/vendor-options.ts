import levenshtein from "fast-levenshtein";
import type { Issue } from "../errors.js";

/**
 * The vendor's analysis options that published clients send with every create
 * call (mostly with default values), validated and normalised. What each one
 * does in Streetflow is documented in docs/analyses.md ("Vendor options").
 */
export const SEGMENT_TYPES = [
  "Motorway",
  "Trunk",
  "Primary",
  "Secondary",
  "Tertiary",
  "Residential",
] as const;
export const ZONE_INTERSECTION_TYPES = ["trips_by_pass_through_setting", "all_trips_for_zone"] as const;

export interface VendorOptions {
  /** Home and work locations of a Zone_Activity_Analysis (home-work-metrics.ts) and the traveller kinds reported. */
  homeWorkLocations: { enabled: boolean; visitor: boolean; resident: boolean; worker: boolean };
  /** Year of the aadt output's data; null: the year of the first date range. */
  aadtCalibrationYear: number | null;
  /** Road classes of a segment analysis; all when the request lists none. */
  segmentTypes: (typeof SEGMENT_TYPES)[number][];
  /** Adds od_all_15min: the od_all cells per 15-minute day part. */
  fifteenMinute: boolean;
  /** The job waits behind every ordinary job (lower priority). */
  massiveQueue: boolean;
  zoneIntersectionType: (typeof ZONE_INTERSECTION_TYPES)[number];
  visualization: boolean;
  /** Calls the organization's completion webhook when the analysis finishes. */
  completionNotice: boolean;
}

export const DEFAULT_VENDOR_OPTIONS: VendorOptions = {
  homeWorkLocations: { enabled: false, visitor: false, resident: false, worker: false },
  aadtCalibrationYear: null,
  segmentTypes: [...SEGMENT_TYPES],
  fifteenMinute: false,
  massiveQueue: false,
  zoneIntersectionType: "trips_by_pass_through_setting",
  visualization: false,
  completionNotice: false,
};

/** The request fields read here. */
export const VENDOR_OPTION_FIELDS = [
  "enable_home_work_locations",
  "hwl_enable_visitor",
  "hwl_enable_resident",
  "hwl_enable_worker",
  "aadt_calibration_year",
  "segment_types",
  "enable_15min",
  "is_massive_queue",
  "zone_intersection_type",
  "enable_visualization",
  "enable_completion_email",
] as const;

/**
 * Fields of other vendor analysis types and client versions: known names, so
 * they are ignored with a warning rather than taken for a misspelling.
 */
export const VENDOR_FIELDS_NOT_USED = [
  // mf_sets, az_sets, geography_type and aadt_year belong to the analysis catalogue (catalogue.ts).
  "cz_sets",
  "vehicle_weight",
  "enable_upsampling",
  "is_ui_enabled",
  "travel_mode_data",
] as const;

type Body = Record<string, unknown>;

/** Clients send "" (or null) for an option left at its default. */
const isUnset = (v: unknown) => v === undefined || v === null || v === "";

function flag(body: Body, field: string, issues: Issue[]): boolean {
  const v = body[field];
  if (isUnset(v)) return false;
  if (typeof v === "boolean") return v;
  issues.push({ field, message: "must be true or false" });
  return false;
}

function calibrationYear(body: Body, issues: Issue[]): number | null {
  const v = body.aadt_calibration_year;
  if (isUnset(v)) return null;
  const year =
    typeof v === "number" ? v : typeof v === "string" && /^\d{4}$/.test(v.trim()) ? Number(v) : NaN;
  if (Number.isInteger(year) && year >= 2000 && year <= 2099) return year;
  issues.push({ field: "aadt_calibration_year", message: "must be a four-digit year from 2000 to 2099" });
  return null;
}

function segmentTypes(body: Body, issues: Issue[]): VendorOptions["segmentTypes"] {
  const v = body.segment_types;
  if (isUnset(v)) return [...SEGMENT_TYPES];
  const list = typeof v === "string" ? v.split(",") : Array.isArray(v) ? v : null;
  if (!list || list.some((t) => typeof t !== "string")) {
    issues.push({ field: "segment_types", message: "must be a list of road classes" });
    return [...SEGMENT_TYPES];
  }
  const out = new Set<VendorOptions["segmentTypes"][number]>();
  for (const raw of list as string[]) {
    const found = SEGMENT_TYPES.find((t) => t.toLowerCase() === raw.trim().toLowerCase());
    if (found) out.add(found);
    else
      issues.push({
        field: "segment_types",
        message: `"${raw}" is not a segment type; one of ${SEGMENT_TYPES.join(", ")}`,
      });
  }
  return out.size ? SEGMENT_TYPES.filter((t) => out.has(t)) : [...SEGMENT_TYPES];
}

function intersectionType(body: Body, issues: Issue[]): VendorOptions["zoneIntersectionType"] {
  const v = body.zone_intersection_type;
  if (isUnset(v)) return DEFAULT_VENDOR_OPTIONS.zoneIntersectionType;
  const found =
    typeof v === "string" ? ZONE_INTERSECTION_TYPES.find((t) => t === v.trim().toLowerCase()) : undefined;
  if (found) return found;
  issues.push({
    field: "zone_intersection_type",
    message: `must be one of ${ZONE_INTERSECTION_TYPES.join(", ")}`,
  });
  return DEFAULT_VENDOR_OPTIONS.zoneIntersectionType;
}

/** Reads every vendor option of a create request; problems go to `issues`. */
export function parseVendorOptions(body: Body, issues: Issue[]): VendorOptions {
  const homeWorkLocations = {
    enabled: flag(body, "enable_home_work_locations", issues),
    visitor: flag(body, "hwl_enable_visitor", issues),
    resident: flag(body, "hwl_enable_resident", issues),
    worker: flag(body, "hwl_enable_worker", issues),
  };
  const { enabled, visitor, resident, worker } = homeWorkLocations;
  if (enabled && !visitor && !resident && !worker)
    issues.push({
      field: "enable_home_work_locations",
      message: "needs one of hwl_enable_visitor, hwl_enable_resident or hwl_enable_worker set to true",
    });
  return {
    homeWorkLocations,
    aadtCalibrationYear: calibrationYear(body, issues),
    segmentTypes: segmentTypes(body, issues),
    fifteenMinute: flag(body, "enable_15min", issues),
    massiveQueue: flag(body, "is_massive_queue", issues),
    zoneIntersectionType: intersectionType(body, issues),
    visualization: flag(body, "enable_visualization", issues),
    completionNotice: flag(body, "enable_completion_email", issues),
  };
}

/** The options of a stored spec; specs stored before the options existed read as the defaults. */
export const vendorOptionsOf = (spec: { vendor?: VendorOptions }): VendorOptions =>
  spec.vendor ?? DEFAULT_VENDOR_OPTIONS;

/** The options as the request spells them, for the analysis detail. */
export function vendorOptionsJson(o: VendorOptions) {
  return {
    enable_home_work_locations: o.homeWorkLocations.enabled,
    hwl_enable_visitor: o.homeWorkLocations.visitor,
    hwl_enable_resident: o.homeWorkLocations.resident,
    hwl_enable_worker: o.homeWorkLocations.worker,
    aadt_calibration_year: o.aadtCalibrationYear,
    segment_types: o.segmentTypes,
    enable_15min: o.fifteenMinute,
    is_massive_queue: o.massiveQueue,
    zone_intersection_type: o.zoneIntersectionType,
    enable_visualization: o.visualization,
    enable_completion_email: o.completionNotice,
  };
}

/**
 * Splits a request's unknown top-level fields: one within a small edit distance
 * of a known field is taken for a misspelling (an issue naming the right field,
 * since ignoring it would silently change the results); any other is ignored
 * and reported back as a warning. `"11"` (a stray key some clients send) is
 * far from every field.
 */
export function unknownFields(
  body: Body,
  known: ReadonlySet<string>,
): { ignored: string[]; misspelt: Issue[] } {
  const ignored: string[] = [];
  const misspelt: Issue[] = [];
  for (const field of Object.keys(body)) {
    if (known.has(field)) continue;
    const nearest = closestField(field, known);
    if (nearest) misspelt.push({ field, message: `is not a field; did you mean ${nearest}?` });
    else ignored.push(field);
  }
  return { ignored, misspelt };
}

function closestField(field: string, known: ReadonlySet<string>): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = levenshtein.get(field.toLowerCase(), candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  // At most 2 edits, and fewer than a third of the name: "tag" is not "tags"'s typo, "day_type" is "day_types"'.
  return bestDistance <= 2 && bestDistance * 3 < field.length ? best : null;
}

/** One warning per ignored field, as the create answer lists them. */
export const ignoredFieldWarnings = (fields: string[]) =>
  fields.map((f) => `unknown field "${f}" was ignored`);
