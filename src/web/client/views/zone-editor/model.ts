/**
 * The zone editor's pure logic, free of DOM and map: which form fields a zone has and when they apply, form ↔
 * feature properties, the obvious checks done before sending, the POST /zone_sets body, and where the API's
 * issue paths (`zones.features[3].properties.name`) point. Unit-tested in test/unit/web-zone-editor.test.ts.
 */
import type { Geometry, LineString, Polygon, Position } from "geojson";
import {
  CALIBRATION_TYPES,
  GATE_SIZE_RANGE,
  MAX_ZONE_NAME_LENGTH,
  ROAD_TYPES,
} from "../../../../shared/zone-vocabulary.js";

export type ZoneKind = "polygon" | "line";

/** One problem as the API reports it (`error.issues[]`); local checks use the same paths. */
export interface Issue {
  field: string;
  message: string;
}

/** What one zone's form holds: numbers as typed (checked on save), flags as booleans, "" = not given. */
export interface ZoneForm {
  name: string;
  id: string;
  is_pass: boolean;
  direction: string;
  is_bidi: boolean;
  road_type: string;
  gate_lat: string;
  gate_lng: string;
  gate_size: string;
  calibration_type: string;
  calibration_value: string;
  personal_traffic_ratio: string;
  medium_commercial_ratio: string;
  heavy_commercial_ratio: string;
  has_pedestrian_calibration: boolean;
  pedestrian_calibration_value: string;
  has_bike_calibration: boolean;
  bike_calibration_value: string;
}

/** The set-wide choices a zone's fields depend on. */
export interface SetOptions {
  kind: ZoneKind;
  withCalibration: boolean;
}

/**
 * How a property is typed: `flag` is the API's 0/1, `bool` a JSON boolean; `integer` and `number` are typed as
 * text and parsed on save; `choice` is one of `choices` or "" for none.
 */
export type FieldType = "text" | "integer" | "number" | "flag" | "bool" | "choice";

export interface FieldSpec {
  key: keyof ZoneForm;
  label: string;
  type: FieldType;
  min?: number;
  max?: number;
  step?: number;
  choices?: readonly string[];
  /** Shown (and sent) only when this holds; a hidden field's value is never sent. */
  applies?: (form: ZoneForm, set: SetOptions) => boolean;
}

/** Line zones are always pass-through; polygons when the user says so. */
export const isPassThrough = (form: ZoneForm, set: SetOptions) => set.kind === "line" || form.is_pass;
const isLine = (_: ZoneForm, set: SetOptions) => set.kind === "line";
const calibrates = (form: ZoneForm, set: SetOptions) => set.withCalibration && isPassThrough(form, set);
const calibratesVehicles = (form: ZoneForm, set: SetOptions) =>
  calibrates(form, set) && form.calibration_type !== "";

/** The spec's recommended split, filled in when a calibration type is first chosen. */
export const RECOMMENDED_RATIOS = {
  personal_traffic_ratio: "0.96",
  medium_commercial_ratio: "0.02",
  heavy_commercial_ratio: "0.02",
} as const;

const ratio = (key: keyof typeof RECOMMENDED_RATIOS, label: string): FieldSpec => ({
  key,
  label,
  type: "number",
  min: 0,
  max: 1,
  step: 0.001,
  applies: calibratesVehicles,
});

/** Every property a zone can have (docs/zone-sets.md), in form order. */
export const ZONE_FIELDS: readonly FieldSpec[] = [
  { key: "name", label: "Name", type: "text" },
  { key: "id", label: "Id (optional)", type: "integer", min: 1 },
  { key: "is_pass", label: "Pass-through zone", type: "flag", applies: (_, set) => set.kind === "polygon" },
  {
    key: "direction",
    label: "Direction (degrees 0–359, optional)",
    type: "integer",
    min: 0,
    max: 359,
    applies: isPassThrough,
  },
  {
    key: "is_bidi",
    label: "Both directions",
    type: "flag",
    applies: (form, set) => isPassThrough(form, set) && form.direction.trim() !== "",
  },
  { key: "road_type", label: "Road type", type: "choice", choices: ROAD_TYPES, applies: isLine },
  { key: "gate_lat", label: "Gate latitude", type: "number", min: -90, max: 90, applies: isLine },
  { key: "gate_lng", label: "Gate longitude", type: "number", min: -180, max: 180, applies: isLine },
  {
    key: "gate_size",
    label: "Gate size (metres)",
    type: "integer",
    min: GATE_SIZE_RANGE[0],
    max: GATE_SIZE_RANGE[1],
    applies: isLine,
  },
  {
    key: "calibration_type",
    label: "Calibration type",
    type: "choice",
    choices: CALIBRATION_TYPES,
    applies: calibrates,
  },
  {
    key: "calibration_value",
    label: "Calibration value (vehicles)",
    type: "integer",
    min: 0,
    max: 1_000_000,
    applies: calibratesVehicles,
  },
  ratio("personal_traffic_ratio", "Personal traffic ratio"),
  ratio("medium_commercial_ratio", "Medium commercial ratio"),
  ratio("heavy_commercial_ratio", "Heavy commercial ratio"),
  { key: "has_pedestrian_calibration", label: "Pedestrian calibration", type: "bool", applies: calibrates },
  {
    key: "pedestrian_calibration_value",
    label: "Pedestrian calibration value",
    type: "integer",
    min: 0,
    max: 999_999,
    applies: (form, set) => calibrates(form, set) && form.has_pedestrian_calibration,
  },
  { key: "has_bike_calibration", label: "Bicycle calibration", type: "bool", applies: calibrates },
  {
    key: "bike_calibration_value",
    label: "Bicycle calibration value",
    type: "integer",
    min: 0,
    max: 10_000,
    applies: (form, set) => calibrates(form, set) && form.has_bike_calibration,
  },
];

/** calibration_type and every field after it in ZONE_FIELDS. */
const CALIBRATION_KEYS = new Set<string>(
  ZONE_FIELDS.slice(ZONE_FIELDS.findIndex((f) => f.key === "calibration_type")).map((f) => f.key),
);

export const fieldApplies = (spec: FieldSpec, form: ZoneForm, set: SetOptions) =>
  spec.applies?.(form, set) ?? true;

export function emptyForm(name = ""): ZoneForm {
  const form = Object.fromEntries(
    ZONE_FIELDS.map((f) => [f.key, f.type === "flag" || f.type === "bool" ? false : ""]),
  ) as unknown as ZoneForm;
  form.name = name;
  return form;
}

/** A file's or a stored zone's properties as a form: 0/1, "1" and true are all "on". */
export function formFromProperties(properties: Record<string, unknown> | null | undefined): ZoneForm {
  const form = emptyForm();
  const p = properties ?? {};
  for (const spec of ZONE_FIELDS) {
    const v = p[spec.key];
    if (v === undefined || v === null) continue;
    if (spec.type === "flag" || spec.type === "bool") {
      (form[spec.key] as boolean) = v === true || v === 1 || v === "1" || v === "true";
    } else if (spec.type === "choice") {
      const text = String(v).trim().toLowerCase();
      (form[spec.key] as string) = spec.choices!.find((c) => c.toLowerCase() === text) ?? String(v);
    } else (form[spec.key] as string) = String(v);
  }
  return form;
}

/** Whether a file's properties carry calibration, so loading it switches "with calibration" on. */
export const hasCalibration = (properties: Record<string, unknown> | null | undefined) =>
  Object.entries(properties ?? {}).some(([k, v]) => CALIBRATION_KEYS.has(k) && v !== null && v !== "");

/** Text typed into a number field: the number when it is one, else the text (the server names the fault). */
function parseNumber(text: string): number | string {
  const n = Number(text.trim());
  return text.trim() !== "" && Number.isFinite(n) ? n : text;
}

/** The properties sent for a zone: exactly the fields the form shows, empty ones left out. */
export function propertiesFromForm(form: ZoneForm, set: SetOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of ZONE_FIELDS) {
    if (!fieldApplies(spec, form, set)) continue;
    const v = form[spec.key];
    if (spec.type === "flag") out[spec.key] = v ? 1 : 0;
    else if (spec.type === "bool") out[spec.key] = v;
    else if (typeof v === "string" && v.trim() !== "")
      out[spec.key] = spec.type === "integer" || spec.type === "number" ? parseNumber(v) : v.trim();
  }
  if (set.kind === "line") out.is_pass = 1;
  return out;
}

/** Where an issue points: a zone (by its index in the request) and maybe one of its properties. */
export type IssueTarget =
  { zone: number; property: string | null; part: string | null } | { zone: null; field: string };

/**
 * `zones.features[3].properties.name` → zone 3, property "name"; `zones.features[3].geometry.type` → zone 3,
 * part "geometry.type"; anything else (zone_set_name, insight_login_email, zones) is set-wide.
 */
export function issueTarget(field: string): IssueTarget {
  const m = /^zones(?:\.features)?\[(\d+)\](?:\.(.+))?$/.exec(field);
  if (!m) return { zone: null, field };
  const part = m[2] ?? null;
  const property = part?.startsWith("properties.") ? part.slice("properties.".length) : null;
  return { zone: Number(m[1]), property, part };
}

/** The API's messages name the zone (`zone "A" (#3): …`); beside the zone itself that label is noise. */
export const withoutZoneLabel = (message: string) =>
  message.replace(/^zone (?:"[^"]*" )?(?:\(#\d+\)|#\d+): /, "");

export interface GroupedIssues {
  general: Issue[];
  byZone: Map<number, { property: string | null; message: string }[]>;
}

export function groupIssues(issues: Issue[]): GroupedIssues {
  const grouped: GroupedIssues = { general: [], byZone: new Map() };
  for (const issue of issues) {
    const target = issueTarget(issue.field);
    if (target.zone === null) {
      grouped.general.push(issue);
      continue;
    }
    const list = grouped.byZone.get(target.zone) ?? [];
    list.push({ property: target.property, message: withoutZoneLabel(issue.message) });
    grouped.byZone.set(target.zone, list);
  }
  return grouped;
}

const zoneField = (index: number, property: string) => `zones.features[${index}].properties.${property}`;
const isWhole = (text: string, min: number, max: number) => {
  const n = Number(text.trim());
  return /^-?\d+$/.test(text.trim()) && n >= min && n <= max;
};

/** Names present, short enough and unique; ids whole, positive and unique; numbers that are numbers. */
export function checkZonesLocally(forms: ZoneForm[], set: SetOptions): Issue[] {
  const issues: Issue[] = [];
  const names = new Map<string, number>();
  const ids = new Map<string, number>();
  forms.forEach((form, i) => {
    const add = (property: string, message: string) =>
      issues.push({ field: zoneField(i, property), message });
    const name = form.name.trim();
    if (name === "") add("name", "name is required");
    else if (name.length > MAX_ZONE_NAME_LENGTH)
      add("name", `name must have at most ${MAX_ZONE_NAME_LENGTH} characters (has ${name.length})`);
    else if (names.has(name.toLowerCase()))
      add(
        "name",
        `name is already used by zone #${names.get(name.toLowerCase())} (names are unique, case-insensitive)`,
      );
    else names.set(name.toLowerCase(), i);
    const id = form.id.trim();
    if (id !== "" && !isWhole(id, 1, Number.MAX_SAFE_INTEGER))
      add("id", "id must be an integer greater than 0");
    else if (id !== "" && ids.has(String(Number(id))))
      add("id", `id ${id} is already used by zone #${ids.get(String(Number(id)))}`);
    else if (id !== "") ids.set(String(Number(id)), i);
    for (const spec of ZONE_FIELDS) {
      const v = form[spec.key];
      if (spec.key === "id" || typeof v !== "string" || v.trim() === "" || !fieldApplies(spec, form, set))
        continue;
      if (spec.type === "integer" && !isWhole(v, spec.min ?? -Infinity, spec.max ?? Infinity))
        add(spec.key, `${spec.key} must be an integer ${spec.min}..${spec.max}`);
      if (spec.type === "number" && !Number.isFinite(Number(v.trim())))
        add(spec.key, `${spec.key} must be a number`);
    }
  });
  return issues;
}

export interface ZoneSetDraft extends SetOptions {
  name: string;
  email: string;
  zones: { geometry: Geometry; form: ZoneForm }[];
}

/** POST /api/v2/zone_sets as the API takes it; zones keep the list's order, so issue indexes find them. */
export function zoneSetBody(draft: ZoneSetDraft) {
  return {
    zone_set_name: draft.name.trim() === "" ? undefined : draft.name.trim(),
    insight_login_email: draft.email.trim(),
    with_calibration: draft.withCalibration,
    geom_type: draft.kind,
    zones: {
      type: "FeatureCollection" as const,
      features: draft.zones.map((z) => ({
        type: "Feature" as const,
        geometry: z.geometry,
        properties: propertiesFromForm(z.form, draft),
      })),
    },
  };
}

/** The kind of zone a geometry makes, or null for geometries the API does not take. */
export function kindOf(geometry: Geometry | null | undefined): ZoneKind | null {
  switch (geometry?.type) {
    case "Polygon":
    case "MultiPolygon":
      return "polygon";
    case "LineString":
    case "MultiLineString":
      return "line";
    default:
      return null;
  }
}

/** Terra Draw refuses more decimals than this (about 0.1 mm); the adapter's default precision. */
export const COORDINATE_PRECISION = 9;

const round = (positions: Position[]): Position[] =>
  positions.map((p) => [+p[0].toFixed(COORDINATE_PRECISION), +p[1].toFixed(COORDINATE_PRECISION)]);

/**
 * The one-part form of a geometry the drawing tools can edit (a Polygon without holes, a LineString), with
 * coordinates rounded to their precision; null for several parts or holes, which stay fixed.
 */
export function editableGeometry(geometry: Geometry): Polygon | LineString | null {
  if (geometry.type === "MultiPolygon" && geometry.coordinates.length === 1)
    return editableGeometry({ type: "Polygon", coordinates: geometry.coordinates[0] });
  if (geometry.type === "MultiLineString" && geometry.coordinates.length === 1)
    return { type: "LineString", coordinates: round(geometry.coordinates[0]) };
  if (geometry.type === "Polygon" && geometry.coordinates.length === 1)
    return { type: "Polygon", coordinates: [round(geometry.coordinates[0])] };
  if (geometry.type === "LineString") return { type: "LineString", coordinates: round(geometry.coordinates) };
  return null;
}

/** A rectangle `halfWidth` × `halfHeight` degrees either side of `centre`: the keyboard's way to a zone. */
export function rectangleAround([lng, lat]: Position, halfWidth: number, halfHeight: number): Polygon {
  const ring: Position[] = [
    [lng - halfWidth, lat + halfHeight],
    [lng + halfWidth, lat + halfHeight],
    [lng + halfWidth, lat - halfHeight],
    [lng - halfWidth, lat - halfHeight],
  ];
  return { type: "Polygon", coordinates: [round([...ring, ring[0]])] };
}

/** A west–east gate line through `centre`, `halfLength` degrees either side. */
export function lineThrough([lng, lat]: Position, halfLength: number): LineString {
  return {
    type: "LineString",
    coordinates: round([
      [lng - halfLength, lat],
      [lng + halfLength, lat],
    ]),
  };
}

/** "Zone 1", "Zone 2", …: the first such name no zone has yet (case-insensitive). */
export function nextZoneName(forms: ZoneForm[], stem = "Zone"): string {
  const taken = new Set(forms.map((f) => f.name.trim().toLowerCase()));
  let n = forms.length + 1;
  while (taken.has(`${stem} ${n}`.toLowerCase())) n++;
  return `${stem} ${n}`;
}
