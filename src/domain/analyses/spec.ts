import { ANALYSIS_REQUEST_FIELDS } from "./request.js";
import type { VehicleClass } from "../../engine/trips/types.js";
import type { StoredZoneSet, YearMonth } from "../records.js";
import type { GeographyTypes } from "../preset-geographies.js";
import { dataPeriods, parseUsDate, type DateRange } from "../date-ranges.js";
import { ValidationError, type Issue } from "../errors.js";
import { findTravelMode, TRAVEL_MODES } from "../travel-modes.js";
import {
  DEFAULT_DAY_PARTS,
  DEFAULT_DAY_TYPES,
  parseBins,
  parseDayParts,
  parseDayTypes,
  parsePercentiles,
  type Bin,
  type DayPart,
  type DayType,
} from "./grammar.js";
import { charCount } from "../text-length.js";
import { bboxOfCoordinates } from "../../engine/zones/geometry.js";
import {
  ALL_ZONE_SET_FIELDS,
  ANALYSIS_CATALOGUE,
  analysisTypeDef,
  type AnalysisOptions,
  type ExtraZoneSetField,
} from "./catalogue.js";
import { parseVendorOptions, unknownFields, type VendorOptions } from "./vendor-options.js";

export { OUTPUT_TYPES } from "../../shared/vocabulary.js";
import { OUTPUT_TYPES } from "../../shared/vocabulary.js";

/** Analysis types this service runs, by canonical spelling (see catalogue.ts). */
export const ANALYSIS_TYPES: readonly string[] = ANALYSIS_CATALOGUE.map((t) => t.name);
export const UNITS = ["miles", "km"] as const;
export const MAX_NAME_LENGTH = 50;

/** Bins used when a request names none (speed in mph or km/h, minutes, miles or km, ratio). */
export const DEFAULT_BINS = {
  trip_speed_bins: "0-10,10-20,20-30,30-40,40-50,50-60,60-70,70-80,80+",
  trip_duration_bins: "0-10,10-20,20-30,30-40,40-50,50-60,60-90,90-120,120+",
  trip_length_bins: "0-1,1-2,2-5,5-10,10-20,20-50,50-100,100+",
  trip_circuity_bins: "1-1.2,1.2-1.4,1.4-1.6,1.6-1.8,1.8-2,2+",
};
export const DEFAULT_SPEED_PERCENTILES = "5,15,50,85,95";

/** The fields of the request schema (request.ts); the others are misspellings or ignored. */
const KNOWN_FIELDS = new Set<string>(ANALYSIS_REQUEST_FIELDS);

/** Classes whose volumes vehicle counts calibrate; riders, cyclists and walkers are not counted by them. */
const CALIBRATED_CLASSES: readonly VehicleClass[] = ["personal", "medium_commercial", "heavy_commercial"];

export interface ZoneSetRef {
  uuid: string;
  name: string;
}

/** A requested period with ISO days for querying trips. */
export interface SpecDateRange extends DateRange {
  startDay: string;
  endDay: string;
}

/** The normalised, self-contained description of an analysis; stored as JSON and handed to the compute. */
export interface AnalysisSpec {
  uuid: string;
  orgId: string;
  name: string;
  loginEmail: string;
  analysisType: string;
  travelMode: string;
  vehicleClasses: VehicleClass[];
  /** Country code of the road network the zones lie on. */
  country: string;
  outputType: (typeof OUTPUT_TYPES)[number];
  /** Zone sets snapshotted by uuid at creation. */
  originSets: ZoneSetRef[];
  destinationSets: ZoneSetRef[];
  dateRanges: SpecDateRange[];
  dayTypes: DayType[];
  dayParts: DayPart[];
  travelerAttributes: boolean;
  tripAttributes: boolean;
  unit: (typeof UNITS)[number];
  bins: { speed: Bin[]; duration: Bin[]; length: Bin[]; circuity: Bin[] };
  /** Null unless enable_speed_percentile. */
  speedPercentiles: number[] | null;
  description: string | null;
  tags: string[];
  /** Middle-filter zone sets (OD_MF_Analysis); absent in specs stored before the catalogue. */
  middleFilterSets?: ZoneSetRef[];
  /** AADT reference zone sets (AADT's az_sets); absent in specs stored before the catalogue. */
  aadtSets?: ZoneSetRef[];
  /** Type-specific parameters (catalogue.ts); absent in specs stored before the catalogue. */
  options?: AnalysisOptions;
  /** The vendor's analysis options; absent in specs stored before they existed (read with vendorOptionsOf). */
  vendor?: VendorOptions;
}

/**
 * What the checks need of the organization's data, read by the use case (src/app/analyses/validate.ts):
 * the data itself, or lookups for what depends on the request (the network under the zones, the periods
 * of the resolved country and travel mode).
 */
export interface ValidationInputs {
  orgId: string;
  /** The organization's zone sets the request references, by the trimmed reference (name or uuid). */
  zoneSets: ReadonlyMap<string, StoredZoneSet>;
  /** Country codes of the imported road networks. */
  importedCountries: readonly string[];
  networks: {
    get(country: string): Promise<{ searchBox(w: number, s: number, e: number, n: number): number[] } | null>;
  };
  /** Preset geography types per country (OD_Preset_Geography). */
  presetAreas: GeographyTypes;
  /** Months with stored trips of these vehicle classes (and sources) in the country. */
  tripMonths(
    country: string,
    vehicleClasses: readonly string[],
    sources?: readonly string[],
  ): Promise<YearMonth[]>;
}

type Body = Record<string, unknown>;

const isObject = (v: unknown): v is Body => typeof v === "object" && v !== null && !Array.isArray(v);
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** Reads an optional field of an expected JS type; a wrong type becomes an issue and reads as absent. */
function optional(body: Body, field: string, type: "string" | "boolean", issues: Issue[]): unknown {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v === type) return v;
  issues.push({ field, message: `must be a ${type}` });
  return undefined;
}

const optionalString = (body: Body, field: string, issues: Issue[]): string | null =>
  (optional(body, field, "string", issues) as string | undefined) ?? null;
const optionalBoolean = (body: Body, field: string, issues: Issue[]): boolean =>
  (optional(body, field, "boolean", issues) as boolean | undefined) ?? false;

/** Case-insensitive pick from a fixed list; the canonical spelling is returned. */
function oneOf<T extends string>(
  value: string | null,
  allowed: readonly T[],
  fallback: T | null,
  field: string,
  issues: Issue[],
): T | null {
  if (value === null) {
    if (fallback === null) issues.push({ field, message: `is required; one of ${allowed.join(", ")}` });
    return fallback;
  }
  const found = allowed.find((a) => a.toLowerCase() === value.trim().toLowerCase());
  if (!found)
    issues.push({ field, message: `"${value}" is not supported; supported: ${allowed.join(", ")}` });
  return found ?? null;
}

function analysisName(body: Body, uuid: string, issues: Issue[]): string {
  const given = optionalString(body, "analysis_name", issues);
  if (given === null) return `analysis_${uuid.replace(/-/g, "").slice(0, 12)}`;
  const name = given.trim();
  if (name === "") issues.push({ field: "analysis_name", message: "must not be blank" });
  if (charCount(name) > MAX_NAME_LENGTH)
    issues.push({ field: "analysis_name", message: `must be at most ${MAX_NAME_LENGTH} characters` });
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name))
    issues.push({ field: "analysis_name", message: "must not contain control characters" });
  return name;
}

/** The zone set a reference `{name}|{uuid}|{zone_set_name}` names, as written; null if malformed. */
function zoneSetReference(ref: unknown): string | null {
  const keys = isObject(ref) ? Object.keys(ref) : [];
  const key = keys.length === 1 ? keys[0] : undefined;
  const value = key && ["name", "uuid", "zone_set_name"].includes(key) ? (ref as Body)[key] : undefined;
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

/** Every zone set a request references, in any zone-set field: what the use case reads for the checks. */
export function zoneSetReferences(body: unknown): string[] {
  if (!isObject(body)) return [];
  const refs = ["oz_sets", ...ALL_ZONE_SET_FIELDS].flatMap((field) => {
    const given = body[field];
    return Array.isArray(given) ? given.map((ref) => zoneSetReference(ref)?.trim() ?? null) : [];
  });
  return [...new Set(refs.filter((r) => r !== null))];
}

/** `[{name}|{uuid}|{zone_set_name}, …]` → the stored sets, duplicates dropped. */
function zoneSets(body: Body, field: string, inputs: ValidationInputs, issues: Issue[]): StoredZoneSet[] {
  const refs = body[field];
  if (!Array.isArray(refs) || refs.length === 0) {
    issues.push({
      field,
      message: "must be a non-empty array of zone set references, each an object with name or uuid",
    });
    return [];
  }
  const found = new Map<string, StoredZoneSet>();
  for (const [i, ref] of refs.entries()) {
    const where = `${field}[${i}]`;
    const value = zoneSetReference(ref);
    if (value === null) {
      issues.push({
        field: where,
        message: "must be an object with one key, name or uuid, naming a zone set",
      });
      continue;
    }
    const set = inputs.zoneSets.get(value.trim());
    if (set) found.set(set.uuid, set);
    else issues.push({ field: where, message: `no zone set "${value}" in this organization` });
  }
  return [...found.values()];
}

/**
 * The zone-set fields besides oz_sets: those the type needs are required, the others refused
 * (an empty list is accepted, as clients send one). With no known type, OD_Analysis' dz_sets
 * and any given ones are checked, so every problem of the request is reported.
 */
function extraZoneSets(
  body: Body,
  wanted: readonly ExtraZoneSetField[] | null,
  inputs: ValidationInputs,
  issues: Issue[],
  optional: readonly ExtraZoneSetField[] = [],
): Partial<Record<ExtraZoneSetField, StoredZoneSet[]>> {
  const out: Partial<Record<ExtraZoneSetField, StoredZoneSet[]>> = {};
  for (const field of ALL_ZONE_SET_FIELDS) {
    const given = body[field];
    const empty = given === undefined || given === null || (Array.isArray(given) && given.length === 0);
    if (optional.includes(field) && empty) continue;
    const check =
      wanted === null ? field === "dz_sets" || !empty : wanted.includes(field) || optional.includes(field);
    if (check) out[field] = zoneSets(body, field, inputs, issues);
    else if (!empty)
      issues.push({ field, message: `is not used by ${String(body.analysis_type)}; leave it out` });
  }
  return out;
}

/** [w, s, e, n] around every zone of the sets. */
const bboxOfSets = (sets: StoredZoneSet[]) =>
  bboxOfCoordinates(sets.flatMap((s) => s.featureCollection.features.map((f) => f.geometry.coordinates)));

/**
 * The request carries no country: it is the given optional `country`, or the
 * one imported network that has road segments within the zones' bounding box.
 */
async function analysisCountry(body: Body, sets: StoredZoneSet[], inputs: ValidationInputs, issues: Issue[]) {
  const imported = inputs.importedCountries;
  const given = optionalString(body, "country", issues);
  if (given !== null) {
    const code = given.trim().toLowerCase();
    if (!imported.includes(code))
      issues.push({
        field: "country",
        message: `no road network for "${given}"; imported: ${imported.join(", ")}`,
      });
    return imported.includes(code) ? code : null;
  }
  const box = bboxOfSets(sets);
  if (!box) return null;
  const matching: string[] = [];
  for (const c of imported)
    if (((await inputs.networks.get(c))?.searchBox(...box).length ?? 0) > 0) matching.push(c);
  if (matching.length === 1) return matching[0];
  issues.push({
    field: "oz_sets",
    message:
      matching.length === 0
        ? "the zones lie outside every imported road network"
        : `the zones touch the road networks of ${matching.join(", ")}; give "country" to choose one`,
  });
  return null;
}

function dateRanges(body: Body, supported: DateRange[] | null, issues: Issue[]): SpecDateRange[] {
  const given = body.date_ranges;
  if (!Array.isArray(given) || given.length === 0) {
    issues.push({
      field: "date_ranges",
      message: "must be a non-empty array of objects with start_date and end_date",
    });
    return [];
  }
  const bounds = (supported ?? []).map((r) => [
    isoDay(parseUsDate(r.start_date)!),
    isoDay(parseUsDate(r.end_date)!),
  ]);
  const out: SpecDateRange[] = [];
  given.forEach((r, i) => {
    const where = `date_ranges[${i}]`;
    const start = isObject(r) && typeof r.start_date === "string" ? parseUsDate(r.start_date) : null;
    const end = isObject(r) && typeof r.end_date === "string" ? parseUsDate(r.end_date) : null;
    if (!start || !end)
      return issues.push({
        field: where,
        message: "start_date and end_date must be real dates written MM/DD/YYYY",
      });
    const range = { start_date: r.start_date as string, end_date: r.end_date as string };
    const [startDay, endDay] = [isoDay(start), isoDay(end)];
    if (endDay < startDay) return issues.push({ field: where, message: "end_date is before start_date" });
    const overlapped = out.find((o) => startDay <= o.endDay && o.startDay <= endDay);
    if (overlapped)
      return issues.push({
        field: where,
        message: `overlaps ${overlapped.start_date}-${overlapped.end_date}`,
      });
    if (supported && !bounds.some(([s, e]) => s <= startDay && endDay <= e))
      return issues.push({
        field: where,
        message:
          `${range.start_date}-${range.end_date} is not within the supported data periods` +
          (supported.length
            ? ` (${supported.map((p) => `${p.start_date}-${p.end_date}`).join(", ")})`
            : " (none)"),
      });
    out.push({ ...range, startDay, endDay });
  });
  return out;
}

/** Calibration zones (pass-through zones with calibration_type) allow volume output. */
const hasCalibration = (sets: StoredZoneSet[]) =>
  sets.some((s) =>
    s.featureCollection.features.some(
      (f) => f.properties.is_pass === 1 && typeof f.properties.calibration_type === "string",
    ),
  );

const hasPassThrough = (sets: StoredZoneSet[]) =>
  sets.some((s) => s.featureCollection.features.some((f) => f.properties.is_pass === 1));

function tags(body: Body, issues: Issue[]): string[] {
  const v = body.tags;
  if (v === undefined || v === null) return [];
  const list = typeof v === "string" ? v.split(",") : Array.isArray(v) ? v : null;
  if (!list || list.some((t) => typeof t !== "string")) {
    issues.push({ field: "tags", message: "must be an array of strings or a comma-separated string" });
    return [];
  }
  return [...new Set((list as string[]).map((t) => t.trim()).filter(Boolean))];
}

function bins(body: Body, issues: Issue[]): AnalysisSpec["bins"] {
  const read = (field: keyof typeof DEFAULT_BINS) =>
    parseBins(optionalString(body, field, issues) ?? DEFAULT_BINS[field], field, issues);
  return {
    speed: read("trip_speed_bins"),
    duration: read("trip_duration_bins"),
    length: read("trip_length_bins"),
    circuity: read("trip_circuity_bins"),
  };
}

/** Fields published clients send that Streetflow type-checks, then ignores (see docs/analyses.md). */
function checkIgnoredFields(body: Body, issues: Issue[]): void {
  optionalBoolean(body, "is_ui_enabled", issues);
  const data = body.travel_mode_data;
  if (data !== undefined && data !== null && typeof data !== "string" && !isObject(data))
    issues.push({ field: "travel_mode_data", message: "must be a string or an object" });
}

/** Top-level fields of a create request that are neither known nor a misspelling of one: ignored. */
export function ignoredRequestFields(body: unknown): string[] {
  return isObject(body) ? unknownFields(body, KNOWN_FIELDS).ignored : [];
}

/**
 * Fields of other analysis types that the request gives a value (`top_routes_count` with OD_Analysis, …).
 * They are accepted and ignored, not refused: vendor clients build one body shape for every type. The
 * create answer warns of each (the zone-set fields are refused instead: they name the zones counted).
 */
export function otherTypeFields(body: unknown, analysisType: string): string[] {
  if (!isObject(body)) return [];
  const own = new Set(analysisTypeDef(analysisType)?.fields ?? []);
  const typeFields = new Set(ANALYSIS_CATALOGUE.flatMap((t) => t.fields));
  const given = (v: unknown) => v !== undefined && v !== null && v !== "";
  return [...typeFields].filter((f) => !own.has(f) && given(body[f]));
}

/** One warning per field of another type, as the create answer lists them. */
export const otherTypeFieldWarnings = (fields: string[], analysisType: string) =>
  fields.map((f) => `${f} is not read by ${analysisType} and was ignored`);

/** The login a create request is made for, trimmed; a body that is no object, or lacks it, fails at once. */
export function analysisLoginEmail(body: unknown): string {
  if (!isObject(body)) throw new ValidationError([{ field: "body", message: "must be a JSON object" }]);
  if (typeof body.insight_login_email !== "string")
    throw new ValidationError([{ field: "insight_login_email", message: "is required" }]);
  return body.insight_login_email.trim();
}

/**
 * Checks a POST /analyses body (whose login is a member: the use case checked it) against the
 * organization's data read into `inputs`, and returns the normalised spec. Every problem is collected
 * into one ValidationError (400). Name uniqueness is the store's job, checked when the analysis is inserted.
 */
export async function checkAnalysisRequest(
  request: unknown,
  inputs: ValidationInputs,
): Promise<AnalysisSpec> {
  const loginEmail = analysisLoginEmail(request);
  const body = request as Body; // an object: analysisLoginEmail checked

  const issues: Issue[] = [...unknownFields(body, KNOWN_FIELDS).misspelt];

  const uuid = crypto.randomUUID();
  const name = analysisName(body, uuid, issues);
  const analysisType = oneOf(
    optionalString(body, "analysis_type", issues),
    ANALYSIS_TYPES,
    null,
    "analysis_type",
    issues,
  );
  const modeName = optionalString(body, "travel_mode_type", issues);
  const mode = modeName === null ? null : findTravelMode(modeName);
  if (!mode)
    issues.push({
      field: "travel_mode_type",
      message: `${modeName === null ? "is required" : `"${modeName}" is not a travel mode`}; one of ${Object.keys(TRAVEL_MODES).join(", ")}`,
    });

  const typeDef = analysisType === null ? undefined : analysisTypeDef(analysisType);
  const origins = zoneSets(body, "oz_sets", inputs, issues);
  const extra = extraZoneSets(body, typeDef?.zoneSets ?? null, inputs, issues, typeDef?.optionalZoneSets);
  const destinations = extra.dz_sets ?? [];
  const allSets = [...origins, ...Object.values(extra).flat()];
  const country = allSets.length ? await analysisCountry(body, allSets, inputs, issues) : null;
  const options =
    (await typeDef?.readOptions({
      body,
      presetAreas: inputs.presetAreas,
      orgId: inputs.orgId,
      country,
      sets: { oz_sets: origins, ...extra },
      issues,
    })) ?? {};
  const supported =
    country && mode
      ? dataPeriods(await inputs.tripMonths(country, mode.vehicleClasses, mode.sources)).supports
      : null;
  const ranges = dateRanges(body, supported, issues);

  const outputType = oneOf(
    optionalString(body, "output_type", issues),
    OUTPUT_TYPES,
    "index",
    "output_type",
    issues,
  );
  if (outputType && typeDef?.outputTypes && !typeDef.outputTypes.includes(outputType))
    issues.push({
      field: "output_type",
      message: `${typeDef.name} computes ${typeDef.outputTypes.join(" or ")} output, not ${outputType}`,
    });
  if (outputType === "volume" && mode?.vehicleClasses.every((c) => !CALIBRATED_CLASSES.includes(c)))
    issues.push({
      field: "output_type",
      message: `volume output is calibrated with vehicle counts; it is not available for ${mode.name}, use index`,
    });
  if (outputType === "volume" && allSets.length && !hasCalibration(allSets))
    issues.push({
      field: "output_type",
      message:
        "volume output needs calibration: none of the referenced zone sets has a pass-through zone with calibration_type",
    });

  if (outputType === "aadt" && allSets.length && !hasPassThrough(allSets))
    issues.push({
      field: "output_type",
      message: "aadt output is computed on pass-through zones; none of the referenced zone sets has one",
    });

  const dayTypes = parseDayTypes(optionalString(body, "day_types", issues) ?? DEFAULT_DAY_TYPES, issues);
  const dayParts = parseDayParts(optionalString(body, "day_parts", issues) ?? DEFAULT_DAY_PARTS, issues);
  const unit = oneOf(
    optionalString(body, "unit_of_measurement", issues),
    UNITS,
    "miles",
    "unit_of_measurement",
    issues,
  );
  const percentilesOn = optionalBoolean(body, "enable_speed_percentile", issues);
  const percentileText = optionalString(body, "speed_percentile_bins", issues) ?? DEFAULT_SPEED_PERCENTILES;
  const percentiles = parsePercentiles(percentileText, "speed_percentile_bins", issues);
  const spec: AnalysisSpec = {
    uuid,
    orgId: inputs.orgId,
    name,
    loginEmail,
    analysisType: analysisType!,
    travelMode: mode?.name ?? "",
    vehicleClasses: [...(mode?.vehicleClasses ?? [])],
    country: country ?? "",
    outputType: outputType!,
    originSets: origins.map((s) => ({ uuid: s.uuid, name: s.name })),
    destinationSets: destinations.map((s) => ({ uuid: s.uuid, name: s.name })),
    dateRanges: ranges,
    dayTypes,
    dayParts,
    travelerAttributes: optionalBoolean(body, "traveler_attributes", issues),
    tripAttributes: optionalBoolean(body, "trip_attributes", issues),
    unit: unit!,
    bins: bins(body, issues),
    speedPercentiles: percentilesOn ? percentiles : null,
    description: optionalString(body, "description", issues),
    tags: tags(body, issues),
    middleFilterSets: (extra.mf_sets ?? []).map((s) => ({ uuid: s.uuid, name: s.name })),
    aadtSets: (extra.az_sets ?? []).map((s) => ({ uuid: s.uuid, name: s.name })),
    options,
    vendor: parseVendorOptions(body, issues),
  };
  checkIgnoredFields(body, issues);
  if (spec.description !== null && charCount(spec.description) > 2000)
    issues.push({ field: "description", message: "must be at most 2000 characters" });
  if (issues.length) throw new ValidationError(issues);
  return spec;
}
