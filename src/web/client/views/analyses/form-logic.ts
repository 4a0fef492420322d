/**
 * The analysis form's rules, DOM-free: date conversions, the checks the page makes before sending, the
 * request body, and which form field a server issue belongs to.
 */

import {
  DEFAULT_DAY_PARTS,
  DEFAULT_DAY_TYPES,
  DEFAULT_TOP_ROUTES,
  MAX_TOP_ROUTES,
  NON_VEHICLE_TRAVEL_MODES,
  NP_METRIC_TYPES,
  type NpMetricType,
  TRAVEL_MODES as SHARED_TRAVEL_MODES,
  type AnalysisTypeName,
  type OutputType,
  type TravelModeName,
} from "../../../../shared/vocabulary.js";

/** A period as the API writes it: MM/DD/YYYY, both ends inclusive. */
export type { UsRange } from "../../../../shared/responses.js";
import type { UsRange } from "../../../../shared/responses.js";

/** A period as date inputs hold it: YYYY-MM-DD ("" when empty). */
export interface IsoRange {
  start: string;
  end: string;
}

export interface Issue {
  field: string;
  message: string;
}

const TRAVEL_MODE_LABELS: Record<TravelModeName, string> = {
  All_Vehicles: "All vehicles",
  All_Vehicles_LBS_Plus: "All vehicles, location-based devices only",
  All_Vehicles_CVD_Plus: "All vehicles, connected vehicles only",
  All_Vehicles_By_Weight: "All vehicles, commercial by weight",
  Personal: "Personal vehicles",
  Truck: "Trucks",
  Bus: "Bus riders",
  Rail: "Rail riders",
  Bicycle: "Bicycles",
  Pedestrian: "Pedestrians",
};

/** The travel modes of the API (src/shared/vocabulary.ts, docs/analyses.md) with the words the form shows. */
export const TRAVEL_MODES: { value: TravelModeName; label: string }[] = SHARED_TRAVEL_MODES.map((value) => ({
  value,
  label: TRAVEL_MODE_LABELS[value],
}));

/**
 * The output types of the API (docs/analyses.md, Output types) with the words and one-line hint the form
 * shows. Which ones a request may use (calibration, pass-through zones) the server decides.
 */
export const OUTPUT_TYPES: { value: OutputType; label: string; hint: string }[] = [
  { value: "index", label: "Index", hint: "Trips per day expanded to a panel of 10,000 devices." },
  {
    value: "volume",
    label: "Volume",
    hint: "Vehicle trips per day, calibrated with counted pass-through zones.",
  },
  {
    value: "trip_counts",
    label: "Trip counts",
    hint: "Expanded trips summed over the analysed days, whole numbers; no calibration.",
  },
  {
    value: "aadt",
    label: "AADT",
    hint: "Annual average daily traffic through pass-through zones, from the year's data.",
  },
  { value: "zone_counts", label: "Zone counts", hint: "Adds per-zone totals of the trips in each zone." },
];

/** Modes whose counts are not vehicles: the API refuses volume output for them. */
export const NON_VEHICLE_MODES: readonly string[] = NON_VEHICLE_TRAVEL_MODES;

/** The API's default day types and day parts (`<name>|<code>`), offered as checkboxes. */
export const DAY_TYPES: readonly string[] = DEFAULT_DAY_TYPES;
export const DAY_PARTS: readonly string[] = DEFAULT_DAY_PARTS;

export const MAX_NAME_LENGTH = 50;

/** 01/31/2025 → 2025-01-31 (null when malformed). */
export function usToIso(us: string): string | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(us);
  return m ? `${m[3]}-${m[1]}-${m[2]}` : null;
}

/** 2025-01-31 → 01/31/2025 (null when malformed). */
export function isoToUs(iso: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  return m ? `${m[2]}/${m[3]}/${m[1]}` : null;
}

const isRealIsoDay = (iso: string) => {
  const d = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === iso;
};

/** The supported periods as ISO day pairs. */
export const isoPeriods = (supported: UsRange[]): IsoRange[] =>
  supported.map((r) => ({ start: usToIso(r.start_date) ?? "", end: usToIso(r.end_date) ?? "" }));

/** "01/01/2025 – 12/31/2025, 03/01/2026 – 03/31/2026" for messages and the form's hint. */
export const describePeriods = (supported: UsRange[]) =>
  supported.length === 0 ? "none" : supported.map((r) => `${r.start_date} – ${r.end_date}`).join(", ");

/**
 * The form's first date range: the latest whole month of the latest supported period (analyses over a
 * month compute in seconds; users widen it when they want more).
 */
export function suggestedRange(supported: UsRange[]): IsoRange | null {
  const last = isoPeriods(supported).at(-1);
  if (!last || !last.end) return null;
  const monthStart = `${last.end.slice(0, 8)}01`;
  return { start: monthStart > last.start ? monthStart : last.start, end: last.end };
}

/**
 * Each range real, start ≤ end, inside one supported period and not overlapping an earlier one: the same
 * rules the server applies, checked first so the user sees them at once.
 */
export function checkDateRanges(ranges: IsoRange[], supported: UsRange[] | null): Issue[] {
  if (ranges.length === 0) return [{ field: "date_ranges", message: "Add at least one date range." }];
  const periods = supported ? isoPeriods(supported) : null;
  const issues: Issue[] = [];
  const accepted: IsoRange[] = [];
  ranges.forEach((r, i) => {
    const field = `date_ranges[${i}]`;
    const fail = (message: string) => issues.push({ field, message });
    if (!r.start || !r.end) return fail("Enter a start and an end date.");
    if (!isRealIsoDay(r.start) || !isRealIsoDay(r.end)) return fail("Enter real calendar dates.");
    if (r.end < r.start) return fail("The end date is before the start date.");
    const overlapped = accepted.find((o) => r.start <= o.end && o.start <= r.end);
    if (overlapped)
      return fail(`Overlaps the range ${isoToUs(overlapped.start)} – ${isoToUs(overlapped.end)}.`);
    if (periods && !periods.some((p) => p.start <= r.start && r.end <= p.end))
      return fail(`Dates must lie within one data period: ${describePeriods(supported!)}.`);
    accepted.push(r);
  });
  return issues;
}

/** What the form asks for besides the origin zone sets, per analysis type. */
export interface AnalysisTypeChoice {
  value: AnalysisTypeName;
  label: string;
  /** Destination zone sets (dz_sets). */
  destinations: boolean;
  /** A preset geography for the destinations (geography_type). */
  geography: boolean;
  /** Middle-filter zone sets (mf_sets). */
  middleFilters?: boolean;
  /** AADT reference zone sets (az_sets) and the year (aadt_year). */
  aadt?: boolean;
  /** Road classes of polygon zones (segment_types). */
  segments?: boolean;
  /** Where the zones' travellers live and work (enable_home_work_locations). */
  homeWork?: boolean;
  /** Routes kept per zone pair or zone (top_routes_count). */
  topRoutes?: boolean;
  /** Network_Performance's figures (metric_type). */
  metricType?: boolean;
}

export { DEFAULT_TOP_ROUTES, MAX_TOP_ROUTES };

/** Network_Performance's `metric_type` values (src/shared/vocabulary.ts) and the words shown for them. */
export const METRIC_TYPE_CHOICES: { value: NpMetricType; label: string }[] = NP_METRIC_TYPES.map((value) => ({
  value,
  label: { all: "Speeds and travel times", speed: "Speeds only", travel_time: "Travel times only" }[value],
}));

/** The traveller kinds of home and work locations, as the request's hwl_enable_<kind> flags name them. */
export const HOME_WORK_KINDS = [
  { value: "visitor", label: "Visitors (neither live nor work in the zone)" },
  { value: "resident", label: "Residents (live in the zone)" },
  { value: "worker", label: "Workers (work in the zone)" },
] as const;
export type HomeWorkKind = (typeof HOME_WORK_KINDS)[number]["value"];

/** The vendor's road classes of a segment analysis. */
export const SEGMENT_TYPES = ["Motorway", "Trunk", "Primary", "Secondary", "Tertiary", "Residential"];

/** The analysis types the form offers (the server's catalogue, docs/analyses.md). */
export const ANALYSIS_TYPE_CHOICES: AnalysisTypeChoice[] = [
  { value: "OD_Analysis", label: "Origin-destination (OD_Analysis)", destinations: true, geography: false },
  {
    value: "OD_Preset_Geography",
    label: "Origins to preset areas (OD_Preset_Geography)",
    destinations: false,
    geography: true,
  },
  {
    value: "Zone_Activity_Analysis",
    label: "Zone activity (Zone_Activity_Analysis)",
    destinations: false,
    geography: false,
    homeWork: true,
  },
  {
    value: "OD_MF_Analysis",
    label: "Origin-destination through middle filters (OD_MF_Analysis)",
    destinations: true,
    geography: false,
    middleFilters: true,
  },
  {
    value: "Segment_Analysis",
    label: "Road segments: volume and speed (Segment_Analysis)",
    destinations: false,
    geography: false,
    segments: true,
  },
  {
    value: "AADT",
    label: "Annual average daily traffic (AADT)",
    destinations: false,
    geography: false,
    aadt: true,
  },
  {
    value: "Network_OD",
    label: "Road segment to road segment (Network_OD, line zones)",
    destinations: true,
    geography: false,
  },
  {
    value: "Network_Performance",
    label: "Road speeds and delay per hour (Network_Performance, line zones)",
    destinations: false,
    geography: false,
    metricType: true,
  },
  {
    value: "Top_Routes_OD",
    label: "Most used routes between zones (Top_Routes_OD)",
    destinations: true,
    geography: false,
    topRoutes: true,
  },
  {
    value: "Top_Routes_ZA",
    label: "Most used routes through zones (Top_Routes_ZA)",
    destinations: false,
    geography: false,
    topRoutes: true,
  },
];

export const analysisTypeChoice = (value: string): AnalysisTypeChoice =>
  ANALYSIS_TYPE_CHOICES.find((t) => t.value === value) ?? ANALYSIS_TYPE_CHOICES[0];

export interface AnalysisForm {
  name: string;
  email: string;
  analysisType: string;
  travelMode: string;
  country: string;
  originSets: string[];
  destinationSets: string[];
  /** The preset geography of OD_Preset_Geography ("" when none chosen). */
  geographyType?: string;
  /** OD_MF_Analysis' middle filters, AADT's reference sets (uuids). */
  middleSets?: string[];
  aadtSets?: string[];
  /** AADT's year, as typed. */
  aadtYear?: string;
  /** Top routes kept per zone pair or zone, as typed. */
  topRoutesCount?: string;
  /** Network_Performance's figures ("all" when not chosen). */
  metricType?: string;
  /** Segment_Analysis' road classes (none: all). */
  segmentTypes?: string[];
  /** Zone_Activity_Analysis' home and work locations: the traveller kinds asked for (none: off). */
  homeWorkKinds?: HomeWorkKind[];
  /** ...over a preset geography ("" = the 500 m grid). */
  homeWorkGeography?: string;
  dateRanges: IsoRange[];
  dayTypes: string[];
  dayParts: string[];
  outputType: string;
  tripAttributes: boolean;
  travelerAttributes: boolean;
}

/** `name|code` items checked, plus the extra text the user typed (comma-separated, same grammar). */
export function namedItems(checked: string[], extra: string): string[] {
  return [...checked, ...extra.split(",").map((s) => s.trim())].filter((s) => s !== "");
}

const DAY_TYPE_ITEM = /^[^|,]+\|[1-7][1-7]$/;
const DAY_PART_ITEM = /^[^|,]+\|\d{4}$/;

/** Everything the page can check without asking the server. */
export function checkForm(form: AnalysisForm, supported: UsRange[] | null): Issue[] {
  const issues: Issue[] = [];
  const name = form.name.trim();
  if (name.length > MAX_NAME_LENGTH)
    issues.push({ field: "analysis_name", message: `At most ${MAX_NAME_LENGTH} characters.` });
  if (!/^[^@\s]+@[^@\s]+$/.test(form.email.trim()))
    issues.push({ field: "insight_login_email", message: "Enter the e-mail of your organization's login." });
  if (form.originSets.length === 0)
    issues.push({ field: "oz_sets", message: "Choose at least one origin zone set." });
  const type = analysisTypeChoice(form.analysisType);
  if (type.destinations && form.destinationSets.length === 0)
    issues.push({ field: "dz_sets", message: "Choose at least one destination zone set." });
  if (type.middleFilters && !form.middleSets?.length)
    issues.push({ field: "mf_sets", message: "Choose at least one middle-filter zone set." });
  if (type.aadt && !form.aadtSets?.length)
    issues.push({ field: "az_sets", message: "Choose at least one AADT reference zone set." });
  if (type.aadt && !/^20\d\d$/.test(form.aadtYear?.trim() ?? ""))
    issues.push({ field: "aadt_year", message: "Enter the year, 2000 to 2099." });
  if (type.topRoutes && !validTopRoutes(form.topRoutesCount))
    issues.push({ field: "top_routes_count", message: `Enter a whole number from 1 to ${MAX_TOP_ROUTES}.` });
  if (type.geography && !form.geographyType)
    issues.push({ field: "geography_type", message: "Choose the preset areas the trips go to." });
  issues.push(...checkDateRanges(form.dateRanges, supported));
  const grammar = (field: string, items: string[], pattern: RegExp, example: string) => {
    if (items.length === 0) issues.push({ field, message: "Choose at least one." });
    const bad = items.find((item) => !pattern.test(item));
    if (bad) issues.push({ field, message: `"${bad}" is not written name|code, e.g. ${example}.` });
  };
  grammar("day_types", form.dayTypes, DAY_TYPE_ITEM, "Weekday|15");
  grammar("day_parts", form.dayParts, DAY_PART_ITEM, "Evening|1921");
  return issues;
}

/** Empty (the default count) or a whole number 1..MAX_TOP_ROUTES. */
function validTopRoutes(typed: string | undefined): boolean {
  const text = typed?.trim() ?? "";
  if (text === "") return true;
  const n = Number(text);
  return /^\d+$/.test(text) && n >= 1 && n <= MAX_TOP_ROUTES;
}

/** The POST /api/v2/analyses body; zone sets by uuid (the API takes {name} or {uuid}). */
export function analysisRequest(form: AnalysisForm): Record<string, unknown> {
  const body: Record<string, unknown> = {
    insight_login_email: form.email.trim(),
    analysis_type: form.analysisType,
    travel_mode_type: form.travelMode,
    output_type: form.outputType,
    country: form.country,
    oz_sets: form.originSets.map((uuid) => ({ uuid })),
    date_ranges: form.dateRanges.map((r) => ({ start_date: isoToUs(r.start), end_date: isoToUs(r.end) })),
    day_types: form.dayTypes.join(","),
    day_parts: form.dayParts.join(","),
    trip_attributes: form.tripAttributes,
    traveler_attributes: form.travelerAttributes,
  };
  const type = analysisTypeChoice(form.analysisType);
  if (type.destinations) body.dz_sets = form.destinationSets.map((uuid) => ({ uuid }));
  if (type.geography) body.geography_type = form.geographyType;
  if (type.middleFilters) body.mf_sets = (form.middleSets ?? []).map((uuid) => ({ uuid }));
  if (type.aadt) {
    body.az_sets = (form.aadtSets ?? []).map((uuid) => ({ uuid }));
    body.aadt_year = Number(form.aadtYear);
  }
  if (type.segments && form.segmentTypes?.length) body.segment_types = form.segmentTypes;
  if (type.topRoutes) body.top_routes_count = Number(form.topRoutesCount?.trim() || DEFAULT_TOP_ROUTES);
  if (type.metricType) body.metric_type = form.metricType || "all";
  if (type.homeWork && form.homeWorkKinds?.length) {
    body.enable_home_work_locations = true;
    for (const { value } of HOME_WORK_KINDS) body[`hwl_enable_${value}`] = form.homeWorkKinds.includes(value);
    if (form.homeWorkGeography) body.geography_type = form.homeWorkGeography;
  }
  if (form.name.trim() !== "") body.analysis_name = form.name.trim();
  return body;
}

/** Form fields that show issues; a date range row shows its own (`date_ranges[2]`). */
const SLOTS = [
  "analysis_name",
  "insight_login_email",
  "analysis_type",
  "travel_mode_type",
  "oz_sets",
  "dz_sets",
  "geography_type",
  "mf_sets",
  "az_sets",
  "aadt_year",
  "segment_types",
  "top_routes_count",
  "metric_type",
  "enable_home_work_locations",
  "homework_geography",
  "date_ranges",
  "day_types",
  "day_parts",
  "output_type",
];

/**
 * Where a server issue is shown: `oz_sets[1]` → `oz_sets`, `day_parts[0]` → `day_parts`, date ranges keep
 * their index; the country belongs to the zone sets (it is inferred from them); anything else → "form".
 */
export function issueSlot(field: string | undefined): string {
  if (!field) return "form";
  if (/^date_ranges\[\d+\]$/.test(field)) return field;
  if (field === "country") return "oz_sets";
  const base = field.replace(/\[\d+\].*$/, "");
  return SLOTS.includes(base) ? base : "form";
}
