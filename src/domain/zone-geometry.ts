import type { ZoneFeature } from "./records.js";
import { positionCapProblem } from "./geometry-limits.js";

/** The two kinds of zone: areas (polygons) and pass-through lines. */
export type ZoneKind = "polygon" | "line";

type Position = [number, number];

/** A zone's geometry after validation: Polygon is widened to MultiPolygon, lines are kept as sent. */
export type ZoneGeometry =
  | { type: "MultiPolygon"; coordinates: Position[][][] }
  | { type: "LineString"; coordinates: Position[] }
  | { type: "MultiLineString"; coordinates: Position[][] };

export type GeometryCheck =
  { ok: true; kind: ZoneKind; geometry: ZoneGeometry } | { ok: false; problem: string };

const KIND_OF_TYPE: Record<string, ZoneKind> = {
  Polygon: "polygon",
  MultiPolygon: "polygon",
  LineString: "line",
  MultiLineString: "line",
};

/** Throws a readable message at the first fault; the caller turns it into an issue. */
class GeometryFault extends Error {}

function position(value: unknown, where: string): Position {
  if (!Array.isArray(value) || value.length < 2)
    throw new GeometryFault(`${where} must be a [lon, lat] position`);
  const [lon, lat] = value;
  if (typeof lon !== "number" || !Number.isFinite(lon) || lon < -180 || lon > 180)
    throw new GeometryFault(`${where} has longitude ${JSON.stringify(lon)}; it must be a number -180..180`);
  if (typeof lat !== "number" || !Number.isFinite(lat) || lat < -90 || lat > 90)
    throw new GeometryFault(`${where} has latitude ${JSON.stringify(lat)}; it must be a number -90..90`);
  // Altitude and other extra members are dropped: zones are planar.
  return [lon, lat];
}

function positions(value: unknown, where: string): Position[] {
  if (!Array.isArray(value)) throw new GeometryFault(`${where} must be an array of positions`);
  return value.map((p, i) => position(p, `${where}[${i}]`));
}

function line(value: unknown, where: string): Position[] {
  const coords = positions(value, where);
  if (coords.length < 2) throw new GeometryFault(`${where} needs at least 2 positions`);
  return coords;
}

function ring(value: unknown, where: string): Position[] {
  const coords = positions(value, where);
  if (coords.length < 4) throw new GeometryFault(`${where} is a ring and needs at least 4 positions`);
  const [first, last] = [coords[0], coords[coords.length - 1]];
  if (first[0] !== last[0] || first[1] !== last[1])
    throw new GeometryFault(`${where} is not closed: its first and last positions differ`);
  return coords;
}

function polygon(value: unknown, where: string): Position[][] {
  if (!Array.isArray(value) || value.length === 0)
    throw new GeometryFault(`${where} must be a non-empty array of rings`);
  return value.map((r, i) => ring(r, `${where}[${i}]`));
}

function nonEmptyArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new GeometryFault(`${what} must be a non-empty array`);
  return value;
}

function parseGeometry(type: string, coordinates: unknown): ZoneGeometry {
  switch (type) {
    case "Polygon":
      return { type: "MultiPolygon", coordinates: [polygon(coordinates, "coordinates")] };
    case "MultiPolygon":
      return {
        type: "MultiPolygon",
        coordinates: nonEmptyArray(coordinates, "coordinates").map((p, i) => polygon(p, `coordinates[${i}]`)),
      };
    case "LineString":
      return { type: "LineString", coordinates: line(coordinates, "coordinates") };
    default:
      return {
        type: "MultiLineString",
        coordinates: nonEmptyArray(coordinates, "coordinates").map((l, i) => line(l, `coordinates[${i}]`)),
      };
  }
}

/** Checks a feature's geometry and normalises it (Polygon → MultiPolygon). */
export function checkGeometry(geometry: unknown): GeometryCheck {
  if (typeof geometry !== "object" || geometry === null || Array.isArray(geometry))
    return { ok: false, problem: "geometry is required and must be a GeoJSON geometry object" };
  const { type, coordinates } = geometry as { type?: unknown; coordinates?: unknown };
  const kind = typeof type === "string" ? KIND_OF_TYPE[type] : undefined;
  if (!kind)
    return {
      ok: false,
      problem: `geometry type ${JSON.stringify(type)} is not accepted; use MultiPolygon, Polygon, LineString or MultiLineString`,
    };
  const tooLarge = positionCapProblem(coordinates);
  if (tooLarge) return { ok: false, problem: `geometry ${tooLarge}` };
  try {
    return { ok: true, kind, geometry: parseGeometry(type as string, coordinates) };
  } catch (e) {
    if (e instanceof GeometryFault) return { ok: false, problem: `geometry ${e.message}` };
    throw e;
  }
}

/**
 * Centre of a zone's bounding box: cheap, deterministic and close enough to
 * the centroid for grouping neighbouring zones by geohash.
 */
export function zoneCentre(geometry: ZoneFeature["geometry"]): { lon: number; lat: number } {
  const flat = (geometry.coordinates as unknown[]).flat(Infinity) as number[];
  let [w, s, e, n] = [Infinity, Infinity, -Infinity, -Infinity];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    w = Math.min(w, flat[i]);
    e = Math.max(e, flat[i]);
    s = Math.min(s, flat[i + 1]);
    n = Math.max(n, flat[i + 1]);
  }
  return { lon: (w + e) / 2, lat: (s + n) / 2 };
}
