import type { AccessMode } from "../../engine/network/network.js";
import type { GeomMode, PolygonRings, Selector } from "../../engine/network/select.js";
import { ROAD_CLASSES, type LonLat, type RoadClass, type Segment } from "../../engine/network/types.js";
import type { VehicleClass } from "../../engine/trips/types.js";
import type { CountsModeName } from "../../shared/vocabulary.js";
import { fail } from "../errors.js";
import { positionCapProblem } from "../geometry-limits.js";

/** Most segments a nearest selector may ask for. */
export const MAX_NEAREST_SEGMENTS = 1_000;
/** Largest radius buffer, in metres (50 km, also the nearest search's reach). */
export const MAX_RADIUS_M = 50_000;
/** Most ids a segment_ids selector may list. */
export const MAX_SEGMENT_IDS = 10_000;

const METRES_PER_UNIT: Record<string, number> = {
  mile: 1609.344,
  miles: 1609.344,
  mi: 1609.344,
  km: 1000,
  kilometer: 1000,
  kilometers: 1000,
  kilometre: 1000,
  kilometres: 1000,
  m: 1,
  meter: 1,
  meters: 1,
  metre: 1,
  metres: 1,
  ft: 0.3048,
  foot: 0.3048,
  feet: 0.3048,
};

/** Travel modes of the counts interface: the vehicle classes counted and the network they may use. */
export const COUNTS_MODES: Record<
  CountsModeName,
  { vehicleClasses: readonly VehicleClass[]; access: AccessMode }
> = {
  vehicle: { vehicleClasses: ["personal", "medium_commercial", "heavy_commercial"], access: "car" },
  truck: { vehicleClasses: ["medium_commercial", "heavy_commercial"], access: "car" },
  bike: { vehicleClasses: ["bicycle"], access: "bike" },
  ped: { vehicleClasses: ["pedestrian"], access: "foot" },
};

export interface CountsMode {
  name: string;
  vehicleClasses: readonly VehicleClass[];
  access: AccessMode;
}

export function requireCountsMode(name: string, field = "mode"): CountsMode {
  const key = name.trim().toLowerCase();
  const mode = (COUNTS_MODES as Record<string, (typeof COUNTS_MODES)[CountsModeName] | undefined>)[key];
  if (!mode) throw fail("unknown_mode", { mode: name, valid: Object.keys(COUNTS_MODES).join(", ") }, field);
  return { name: key, ...mode };
}

export interface PointInput {
  type: string;
  coordinates: number[];
}

/** The selector object as the request schema admits it; semantics are checked here. */
export interface GeometryInput {
  nearest?: { point: PointInput; number_segments: number };
  radius?: {
    point: PointInput;
    geom_mode?: string;
    buffer?: number;
    unit?: string;
    distance?: number;
    distance_unit?: string;
  };
  polygon?: { type: string; coordinates: unknown; geom_mode?: string };
  segment_ids?: number[];
}

const SELECTOR_KINDS = ["nearest", "radius", "polygon", "segment_ids"] as const;

/** Turns the request's `geometry` into an engine selector, or fails with a 400 naming the field. */
export function parseSelector(geometry: GeometryInput): Selector {
  const given = SELECTOR_KINDS.filter((k) => geometry[k] !== undefined);
  if (given.length !== 1)
    throw fail(
      "invalid_geometry",
      {
        reason:
          given.length === 0
            ? `geometry needs exactly one selector: ${SELECTOR_KINDS.join(", ")}`
            : `geometry has ${given.length} selectors (${given.join(", ")}); give exactly one`,
      },
      "geometry",
    );
  if (geometry.nearest) return parseNearest(geometry.nearest);
  if (geometry.radius) return parseRadius(geometry.radius);
  if (geometry.polygon) return parsePolygon(geometry.polygon);
  return parseSegmentIds(geometry.segment_ids!);
}

function parseNearest(nearest: NonNullable<GeometryInput["nearest"]>): Selector {
  const count = nearest.number_segments;
  if (!Number.isInteger(count) || count < 1 || count > MAX_NEAREST_SEGMENTS)
    throw fail(
      "invalid_geometry",
      { reason: `number_segments must be an integer from 1 to ${MAX_NEAREST_SEGMENTS}` },
      "geometry.nearest.number_segments",
    );
  return { kind: "nearest", point: parsePoint(nearest.point, "geometry.nearest.point"), count };
}

function parseRadius(radius: NonNullable<GeometryInput["radius"]>): Selector {
  const point = parsePoint(radius.point, "geometry.radius.point");
  // The vendor form is {buffer, unit}; some client code sends {distance, distance_unit}.
  const [amount, amountField] =
    radius.buffer !== undefined ? [radius.buffer, "buffer"] : [radius.distance, "distance"];
  const unit = radius.buffer !== undefined ? radius.unit : (radius.distance_unit ?? radius.unit);
  const unitField =
    radius.buffer !== undefined || radius.distance_unit === undefined ? "unit" : "distance_unit";
  if (amount === undefined)
    throw fail("invalid_geometry", { reason: "radius needs buffer (or distance)" }, "geometry.radius.buffer");
  if (unit === undefined)
    throw fail("invalid_geometry", { reason: "radius needs unit" }, `geometry.radius.${unitField}`);
  const perUnit = METRES_PER_UNIT[unit.trim().toLowerCase()];
  if (perUnit === undefined)
    throw fail(
      "invalid_geometry",
      { reason: `unknown unit "${unit}"; valid units: mile (mi, miles), km, m (meters), ft` },
      `geometry.radius.${unitField}`,
    );
  const radiusM = amount * perUnit;
  if (!(amount > 0) || radiusM > MAX_RADIUS_M)
    throw fail(
      "invalid_geometry",
      { reason: `${amountField} must be above 0 and at most ${MAX_RADIUS_M / 1000} km` },
      `geometry.radius.${amountField}`,
    );
  return {
    kind: "radius",
    point,
    radiusM,
    mode: parseGeomMode(radius.geom_mode, "geometry.radius.geom_mode"),
  };
}

function parseGeomMode(value: string | undefined, field: string): GeomMode {
  if (value === undefined) return "intersects";
  const mode = value.trim().toLowerCase();
  if (mode === "within" || mode === "intersects") return mode;
  throw fail(
    "invalid_geometry",
    { reason: `geom_mode must be "within" or "intersects", not "${value}"` },
    field,
  );
}

function parsePoint(point: PointInput, field: string): LonLat {
  if (point.type.toLowerCase() !== "point")
    throw fail("invalid_geometry", { reason: `type must be "point", not "${point.type}"` }, `${field}.type`);
  return parsePosition(point.coordinates, `${field}.coordinates`);
}

function parsePosition(value: unknown, field: string): LonLat {
  if (!Array.isArray(value) || value.length < 2 || !value.every((v) => typeof v === "number" && isFinite(v)))
    throw fail("invalid_geometry", { reason: "a position is [longitude, latitude] (numbers)" }, field);
  const [lon, lat] = value as number[];
  if (lon < -180 || lon > 180)
    throw fail("invalid_geometry", { reason: `longitude ${lon} is outside -180..180` }, field);
  if (lat < -90 || lat > 90)
    throw fail("invalid_geometry", { reason: `latitude ${lat} is outside -90..90` }, field);
  return [lon, lat];
}

function parsePolygon(polygon: NonNullable<GeometryInput["polygon"]>): Selector {
  const type = polygon.type.toLowerCase();
  const field = "geometry.polygon.coordinates";
  const mode = parseGeomMode(polygon.geom_mode, "geometry.polygon.geom_mode");
  const tooLarge = positionCapProblem(polygon.coordinates);
  if (tooLarge) throw fail("geometry_too_large", { reason: tooLarge }, field);
  if (type === "polygon")
    return { kind: "polygon", polygons: [parseRings(polygon.coordinates, field)], mode };
  if (type === "multipolygon") {
    if (!Array.isArray(polygon.coordinates) || polygon.coordinates.length === 0)
      throw fail("invalid_geometry", { reason: "a MultiPolygon needs at least one polygon" }, field);
    const polygons = polygon.coordinates.map((p, i) => parseRings(p, `${field}[${i}]`));
    return { kind: "polygon", polygons, mode };
  }
  throw fail(
    "invalid_geometry",
    { reason: `type must be "Polygon" or "MultiPolygon", not "${polygon.type}"` },
    "geometry.polygon.type",
  );
}

function parseRings(value: unknown, field: string): PolygonRings {
  if (!Array.isArray(value) || value.length === 0)
    throw fail("invalid_geometry", { reason: "a polygon is a non-empty array of rings" }, field);
  return value.map((ring, r) => {
    if (!Array.isArray(ring) || ring.length < 4)
      throw fail("invalid_geometry", { reason: "a ring needs at least 4 positions" }, `${field}[${r}]`);
    return ring.map((p, i) => parsePosition(p, `${field}[${r}][${i}]`));
  });
}

function parseSegmentIds(ids: number[]): Selector {
  if (ids.length === 0 || ids.length > MAX_SEGMENT_IDS)
    throw fail(
      "invalid_geometry",
      { reason: `segment_ids must list 1 to ${MAX_SEGMENT_IDS} ids` },
      "geometry.segment_ids",
    );
  return { kind: "segment_ids", ids };
}

export interface ClassFilterInput {
  include?: string[];
  exclude?: string[];
}

/** Road classes a request admits; null when it does not filter. Unknown names fail with the valid list. */
export function parseRoadClasses(input: ClassFilterInput | undefined): Set<RoadClass> | null {
  if (!input || (input.include === undefined && input.exclude === undefined)) return null;
  const include = input.include ? classNames(input.include, "include") : [...ROAD_CLASSES];
  const exclude = new Set(input.exclude ? classNames(input.exclude, "exclude") : []);
  return new Set(include.filter((c) => !exclude.has(c)));
}

function classNames(names: string[], part: string): RoadClass[] {
  const normalised = names.map((n) => n.trim().toLowerCase());
  const unknown = names.filter((_, i) => !(ROAD_CLASSES as readonly string[]).includes(normalised[i]));
  if (unknown.length > 0)
    throw fail(
      "unknown_road_class",
      { classes: unknown.map((u) => `"${u}"`).join(", "), valid: ROAD_CLASSES.join(", ") },
      `roadway_classification.${part}`,
    );
  return normalised as RoadClass[];
}

/** The segments a mode may travel and the class filter admits. */
export function segmentFilter(
  mode: CountsMode,
  classes: Set<RoadClass> | null,
  allows: (s: Segment, access: AccessMode) => boolean,
): (s: Segment) => boolean {
  return (s) => allows(s, mode.access) && (classes === null || classes.has(s.roadClass));
}
