import type { ZoneKind } from "./zone-geometry.js";
import {
  CALIBRATION_TYPES,
  GATE_SIZE_RANGE,
  MAX_ZONE_NAME_LENGTH,
  RATIO_SUM_TOLERANCE,
  ROAD_TYPES,
} from "../shared/zone-vocabulary.js";
import { charCount } from "./text-length.js";

export { CALIBRATION_TYPES, GATE_SIZE_RANGE, MAX_ZONE_NAME_LENGTH, RATIO_SUM_TOLERANCE, ROAD_TYPES };

const RATIOS = ["personal_traffic_ratio", "medium_commercial_ratio", "heavy_commercial_ratio"] as const;
const GATE_PROPERTIES = ["gate_lat", "gate_lng", "gate_size"] as const;
const CALIBRATION_PROPERTIES = [
  "calibration_type",
  "calibration_value",
  ...RATIOS,
  "has_pedestrian_calibration",
  "pedestrian_calibration_value",
  "has_bike_calibration",
  "bike_calibration_value",
] as const;

/** Strings accepted (case-insensitively) for a zone set's or a zone's `geom_type`. */
const GEOM_TYPE_ALIASES: Record<string, ZoneKind> = {
  polygon: "polygon",
  multipolygon: "polygon",
  line: "line",
  linestring: "line",
  multilinestring: "line",
};

export function parseGeomType(value: unknown): ZoneKind | undefined {
  return typeof value === "string" ? GEOM_TYPE_ALIASES[value.trim().toLowerCase()] : undefined;
}

export const GEOM_TYPE_HINT = "must be one of polygon, multipolygon, line, linestring, multilinestring";

/** The properties of a zone after validation; optional members appear only when given. */
export interface ZoneProperties {
  name: string;
  id: number | null;
  is_pass: 0 | 1;
  direction: number | null;
  is_bidi: 0 | 1;
  geom_type: ZoneKind;
  [optional: string]: unknown;
}

export interface PropertyContext {
  kind: ZoneKind;
  withCalibration: boolean;
}

/** Reports one problem of a property, named relative to `properties`. */
export type Report = (property: string, message: string) => void;

const absent = (v: unknown): v is null | undefined => v === undefined || v === null;
const isInt = (v: unknown, min: number, max: number): v is number =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const isNumberIn = (v: unknown, min: number, max: number): v is number =>
  typeof v === "number" && Number.isFinite(v) && v >= min && v <= max;

/** `null`, 0 or 1 as the spec allows; undefined when invalid. */
function flag(v: unknown): 0 | 1 | null | undefined {
  if (absent(v)) return null;
  return v === 0 || v === 1 ? v : undefined;
}

/** Booleans; 0/1 too, since shapefile attribute tables often hold them as numbers. */
function bool(v: unknown): boolean | null | undefined {
  if (absent(v)) return null;
  if (typeof v === "boolean") return v;
  return v === 0 || v === 1 ? v === 1 : undefined;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[]): T | undefined {
  if (typeof v !== "string") return undefined;
  return allowed.find((a) => a.toLowerCase() === v.trim().toLowerCase());
}

function checkName(v: unknown, report: Report): string {
  if (typeof v !== "string" || v.trim() === "") {
    report("name", "name is required and must be a non-empty string");
    return "";
  }
  const name = v.trim();
  if (charCount(name) > MAX_ZONE_NAME_LENGTH)
    report("name", `name must have at most ${MAX_ZONE_NAME_LENGTH} characters (has ${charCount(name)})`);
  return name;
}

function checkId(v: unknown, report: Report): number | null {
  if (absent(v)) return null;
  if (!isInt(v, 1, Number.MAX_SAFE_INTEGER)) {
    report("id", "id must be null or an integer greater than 0");
    return null;
  }
  return v;
}

function checkIsPass(v: unknown, kind: ZoneKind, report: Report): 0 | 1 {
  const f = flag(v);
  if (f === undefined) report("is_pass", "is_pass must be null, 0 or 1");
  if (kind === "line") {
    if (f === 0)
      report("is_pass", "is_pass must be 1 (or absent) on a line zone: line zones are pass-through");
    return 1;
  }
  return f === 1 ? 1 : 0;
}

function checkDirection(v: unknown, isPass: 0 | 1, report: Report): number | null {
  if (absent(v)) return null;
  if (!isInt(v, 0, 359)) {
    report("direction", "direction must be an integer 0..359");
    return null;
  }
  if (isPass !== 1) report("direction", "direction is allowed only on pass-through zones (is_pass = 1)");
  return v;
}

function checkIsBidi(v: unknown, direction: number | null, isPass: 0 | 1, report: Report): 0 | 1 {
  const f = flag(v);
  if (f === undefined) report("is_bidi", "is_bidi must be null, 0 or 1");
  if (f === 1 && (direction === null || isPass !== 1))
    report("is_bidi", "is_bidi = 1 requires a direction on a pass-through zone (is_pass = 1)");
  return f === 1 ? 1 : 0;
}

function checkZoneGeomType(v: unknown, kind: ZoneKind, report: Report): void {
  if (absent(v)) return;
  const given = parseGeomType(v);
  if (!given) report("geom_type", `geom_type ${GEOM_TYPE_HINT}`);
  else if (given !== kind) report("geom_type", `geom_type is ${given} but the geometry is a ${kind}`);
}

/** road_type and the custom gate: line zones only. */
function checkLineProperties(
  p: Record<string, unknown>,
  kind: ZoneKind,
  out: Record<string, unknown>,
  report: Report,
): void {
  for (const key of ["road_type", ...GATE_PROPERTIES]) {
    if (!absent(p[key]) && kind !== "line") report(key, `${key} is allowed only on line zones`);
  }
  if (kind !== "line") return;
  if (!absent(p.road_type)) {
    const roadType = oneOf(p.road_type, ROAD_TYPES);
    if (roadType) out.road_type = roadType;
    else report("road_type", `road_type must be one of ${ROAD_TYPES.join(", ")}`);
  }
  checkGate(p, out, report);
}

function checkGate(p: Record<string, unknown>, out: Record<string, unknown>, report: Report): void {
  const [lat, lng, size] = [p.gate_lat, p.gate_lng, p.gate_size];
  if (!absent(lat)) {
    if (isNumberIn(lat, -90, 90)) out.gate_lat = lat;
    else report("gate_lat", "gate_lat must be a number -90..90");
  }
  if (!absent(lng)) {
    if (isNumberIn(lng, -180, 180)) out.gate_lng = lng;
    else report("gate_lng", "gate_lng must be a number -180..180");
  }
  if (absent(lat) !== absent(lng)) {
    const missing = absent(lat) ? "gate_lat" : "gate_lng";
    report(missing, "gate_lat and gate_lng must be given together");
  }
  if (!absent(size)) {
    const [min, max] = GATE_SIZE_RANGE;
    if (isInt(size, min, max)) out.gate_size = size;
    else report("gate_size", `gate_size must be an integer ${min}..${max} (metres)`);
    if (absent(lat) && absent(lng)) report("gate_size", "gate_size requires gate_lat and gate_lng");
  }
}

function checkCalibration(
  p: Record<string, unknown>,
  ctx: PropertyContext,
  isPass: 0 | 1,
  out: Record<string, unknown>,
  report: Report,
): void {
  const given = CALIBRATION_PROPERTIES.filter((k) => !absent(p[k]));
  if (given.length === 0) return;
  if (!ctx.withCalibration) {
    for (const k of given) report(k, `${k} is allowed only when with_calibration is true`);
    return;
  }
  if (isPass !== 1) {
    for (const k of given) report(k, `${k} is allowed only on pass-through zones (is_pass = 1)`);
    return;
  }
  checkVehicleCalibration(p, out, report);
  checkModeCalibration(p, "pedestrian", 999_999, out, report);
  checkModeCalibration(p, "bike", 10_000, out, report);
}

/** calibration_type with its value and the three traffic ratios, all required together. */
function checkVehicleCalibration(
  p: Record<string, unknown>,
  out: Record<string, unknown>,
  report: Report,
): void {
  const hasType = !absent(p.calibration_type);
  if (hasType) {
    const type = oneOf(p.calibration_type, CALIBRATION_TYPES);
    if (type) out.calibration_type = type;
    else report("calibration_type", `calibration_type must be one of ${CALIBRATION_TYPES.join(", ")}`);
  }
  const value = p.calibration_value;
  if (absent(value)) {
    if (hasType) report("calibration_value", "calibration_value is required when calibration_type is set");
  } else {
    if (isInt(value, 0, 1_000_000)) out.calibration_value = value;
    else report("calibration_value", "calibration_value must be an integer 0..1,000,000");
    if (!hasType) report("calibration_value", "calibration_value requires calibration_type");
  }
  checkRatios(p, hasType, out, report);
}

function checkRatios(
  p: Record<string, unknown>,
  hasType: boolean,
  out: Record<string, unknown>,
  report: Report,
): void {
  let validCount = 0;
  let sum = 0;
  for (const key of RATIOS) {
    const v = p[key];
    if (absent(v)) {
      if (hasType) report(key, `${key} is required when calibration_type is set`);
      continue;
    }
    if (!hasType) report(key, `${key} requires calibration_type`);
    if (isNumberIn(v, 0, 1)) {
      out[key] = v;
      validCount++;
      sum += v;
    } else report(key, `${key} must be a number 0.000..1.000`);
  }
  if (validCount === RATIOS.length && Math.abs(sum - 1) > RATIO_SUM_TOLERANCE)
    report(RATIOS[0], `the three traffic ratios must sum to 1.0 (they sum to ${+sum.toFixed(6)})`);
}

/** has_<mode>_calibration enables <mode>_calibration_value, which it then requires. */
function checkModeCalibration(
  p: Record<string, unknown>,
  mode: "pedestrian" | "bike",
  max: number,
  out: Record<string, unknown>,
  report: Report,
): void {
  const [hasKey, valueKey] = [`has_${mode}_calibration`, `${mode}_calibration_value`];
  const enabled = bool(p[hasKey]);
  if (enabled === undefined) report(hasKey, `${hasKey} must be a boolean`);
  else if (enabled !== null) out[hasKey] = enabled;
  const value = p[valueKey];
  if (absent(value)) {
    if (enabled) report(valueKey, `${valueKey} is required when ${hasKey} is true`);
    return;
  }
  if (isInt(value, 0, max)) out[valueKey] = value;
  else report(valueKey, `${valueKey} must be an integer 0..${max.toLocaleString("en-US")}`);
  if (!enabled) report(valueKey, `${valueKey} requires ${hasKey} = true`);
}

function checkOsmId(v: unknown, kind: ZoneKind, out: Record<string, unknown>, report: Report): void {
  if (absent(v)) return;
  if (kind !== "line") report("osm_id", "osm_id is allowed only on line zones");
  else if (isInt(v, 1, Number.MAX_SAFE_INTEGER)) out.osm_id = v;
  else report("osm_id", "osm_id must be an integer greater than 0");
}

/**
 * Validates one zone's own properties (set-wide uniqueness is the caller's)
 * and returns them normalised. Unknown properties are dropped.
 */
export function normaliseZoneProperties(
  p: Record<string, unknown>,
  ctx: PropertyContext,
  report: Report,
): ZoneProperties {
  const name = checkName(p.name, report);
  const id = checkId(p.id, report);
  const isPass = checkIsPass(p.is_pass, ctx.kind, report);
  const direction = checkDirection(p.direction, isPass, report);
  const isBidi = checkIsBidi(p.is_bidi, direction, isPass, report);
  checkZoneGeomType(p.geom_type, ctx.kind, report);
  const out: ZoneProperties = {
    name,
    id,
    is_pass: isPass,
    direction,
    is_bidi: isBidi,
    geom_type: ctx.kind,
  };
  checkOsmId(p.osm_id, ctx.kind, out, report);
  checkLineProperties(p, ctx.kind, out, report);
  checkCalibration(p, ctx, isPass, out, report);
  return out;
}
