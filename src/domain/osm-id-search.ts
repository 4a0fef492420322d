import type { Network } from "../engine/network/network.js";
import { IndexedPolygon, segmentsInPolygon } from "../engine/network/polygon-select.js";
import { ROAD_CLASSES, type LonLat, type Segment } from "../engine/network/types.js";
import { ValidationError, type Issue } from "./errors.js";
import { positionCapProblem } from "./geometry-limits.js";

/** Metres per unit of a radius buffer; keys lowercase. */
export const BUFFER_UNITS: Record<string, number> = {
  mi: 1609.344,
  mile: 1609.344,
  miles: 1609.344,
  km: 1000,
  m: 1,
  ft: 0.3048,
};
export const MAX_RADIUS_M = 50_000;
/** Beyond this the caller should narrow the geometry rather than build one giant zone set. */
export const MAX_RESULT_WAYS = 50_000;

/** The request as clients send it, keys already lowercased. */
export interface OsmIdSearchRequest {
  geometry: {
    polygon?: { type: string; coordinates: number[][][] };
    radius?: {
      point: { type: string; coordinates: number[] };
      buffer: number;
      unit: string;
      geom_mode?: string;
    };
  };
  country?: string;
  roadway_classification?: { include: string[] };
}

export type Selector =
  { kind: "polygon"; rings: LonLat[][] } | { kind: "radius"; center: LonLat; radiusM: number };

export interface OsmIdSearch {
  selector: Selector;
  countries: string[] | null;
  classes: Set<string> | null;
}

/** One OSM way that has a segment in the geometry. */
export interface OsmIdRow {
  osmId: number;
  roadClass: string;
  segmentCount: number;
  name: string | null;
  lengthM: number;
  country: string;
}

/** Checks what the schema cannot express and turns the body into a search; throws ValidationError listing every problem. */
export function parseOsmIdSearch(body: OsmIdSearchRequest): OsmIdSearch {
  const issues: Issue[] = [];
  const selector = parseSelector(body.geometry, issues);
  const classes = body.roadway_classification
    ? parseClasses(body.roadway_classification.include, issues)
    : null;
  if (issues.length > 0 || selector === null) throw new ValidationError(issues);
  return { selector, countries: body.country ? [body.country.trim().toLowerCase()] : null, classes };
}

function parseSelector(geometry: OsmIdSearchRequest["geometry"], issues: Issue[]): Selector | null {
  const given = (["polygon", "radius"] as const).filter((k) => geometry[k] !== undefined);
  if (given.length !== 1) {
    issues.push({ field: "geometry", message: "give exactly one of polygon or radius" });
    return null;
  }
  return geometry.polygon ? parsePolygon(geometry.polygon, issues) : parseRadius(geometry.radius!, issues);
}

function parsePolygon(
  polygon: NonNullable<OsmIdSearchRequest["geometry"]["polygon"]>,
  issues: Issue[],
): Selector {
  const field = "geometry.polygon";
  if (polygon.type.toLowerCase() !== "polygon")
    issues.push({ field: `${field}.type`, message: `must be "polygon", not "${polygon.type}"` });
  const tooLarge = positionCapProblem(polygon.coordinates);
  if (tooLarge) {
    issues.push({ field: `${field}.coordinates`, message: tooLarge });
    return { kind: "polygon", rings: [] };
  }
  const rings = polygon.coordinates.map((ring, r) => {
    const positions = ring.map((p, i) => checkPosition(p, `${field}.coordinates[${r}][${i}]`, issues));
    const [first, last] = [positions[0], positions[positions.length - 1]];
    if (first[0] !== last[0] || first[1] !== last[1])
      issues.push({
        field: `${field}.coordinates[${r}]`,
        message: "ring must be closed (last position equal to the first)",
      });
    return positions;
  });
  return { kind: "polygon", rings };
}

function parseRadius(
  radius: NonNullable<OsmIdSearchRequest["geometry"]["radius"]>,
  issues: Issue[],
): Selector {
  const field = "geometry.radius";
  if (radius.point.type.toLowerCase() !== "point")
    issues.push({ field: `${field}.point.type`, message: `must be "point", not "${radius.point.type}"` });
  if (radius.geom_mode !== undefined && radius.geom_mode.toLowerCase() !== "within")
    issues.push({ field: `${field}.geom_mode`, message: `only "within" is supported` });
  const center = checkPosition(radius.point.coordinates, `${field}.point.coordinates`, issues);
  const metresPerUnit = BUFFER_UNITS[radius.unit.toLowerCase()];
  if (metresPerUnit === undefined)
    issues.push({
      field: `${field}.unit`,
      message: `unknown unit "${radius.unit}"; use one of ${Object.keys(BUFFER_UNITS).join(", ")}`,
    });
  const radiusM = radius.buffer * (metresPerUnit ?? 1);
  if (!(radius.buffer > 0)) issues.push({ field: `${field}.buffer`, message: "must be greater than 0" });
  else if (metresPerUnit !== undefined && radiusM > MAX_RADIUS_M)
    issues.push({ field: `${field}.buffer`, message: `must be at most ${MAX_RADIUS_M / 1000} km` });
  return { kind: "radius", center, radiusM };
}

function checkPosition(p: number[], field: string, issues: Issue[]): LonLat {
  const [lon, lat] = p;
  if (!(lon >= -180 && lon <= 180)) issues.push({ field, message: `longitude ${lon} is outside -180..180` });
  if (!(lat >= -90 && lat <= 90)) issues.push({ field, message: `latitude ${lat} is outside -90..90` });
  return [lon, lat];
}

/** Reported classes plus the raw `*_link` highways folded into `ramp`. */
const SELECTABLE_CLASSES = new Set<string>([
  ...ROAD_CLASSES,
  ...["motorway", "trunk", "primary", "secondary", "tertiary"].map((h) => `${h}_link`),
]);

function parseClasses(include: string[], issues: Issue[]): Set<string> {
  const classes = include.map((c) => c.trim().toLowerCase());
  classes.forEach((c, i) => {
    if (!SELECTABLE_CLASSES.has(c))
      issues.push({
        field: `roadway_classification.include[${i}]`,
        message: `unknown road class "${include[i]}"`,
      });
  });
  return new Set(classes);
}

/** The ways with a segment in the search geometry of one network. */
export function waysIn(network: Network, { selector, classes }: OsmIdSearch): OsmIdRow[] {
  const wanted = classes ? (s: Segment) => classes.has(s.roadClass) || classes.has(s.highway) : undefined;
  const segments =
    selector.kind === "radius"
      ? network.withinRadius(selector.center, selector.radiusM, wanted).map((hit) => hit.segment)
      : segmentsInPolygon(network, new IndexedPolygon(selector.rings), wanted);
  const wayIds = new Set(segments.map((s) => s.wayId));
  return [...wayIds].map((wayId) => wayRow(network, wayId));
}

function wayRow(network: Network, wayId: number): OsmIdRow {
  const pieces = network.segmentsOfWay(wayId);
  const lengthM = pieces.reduce((sum, s) => sum + s.lengthM, 0);
  return {
    osmId: wayId,
    roadClass: pieces[0].roadClass,
    segmentCount: pieces.length,
    name: pieces[0].name,
    lengthM: Math.round(lengthM * 10) / 10,
    country: network.country,
  };
}
