import classifyPoint from "robust-point-in-polygon";
import type { LonLat } from "../network/types.js";

/** Rings of one polygon: the outer ring first, then holes. */
export type PolygonRings = LonLat[][];

/** Inside the polygon's outer ring and outside its holes; the boundary counts as inside. */
export function pointInPolygon(p: LonLat, rings: PolygonRings): boolean {
  if (classifyPoint(rings[0], p) > 0) return false;
  for (let h = 1; h < rings.length; h++) if (classifyPoint(rings[h], p) < 0) return false;
  return true;
}

export function pointInMultiPolygon(p: LonLat, polygons: PolygonRings[]): boolean {
  return polygons.some((rings) => pointInPolygon(p, rings));
}

export function bboxOfPoints(points: Iterable<LonLat>): [number, number, number, number] {
  let w = Infinity;
  let s = Infinity;
  let e = -Infinity;
  let n = -Infinity;
  for (const [x, y] of points) {
    if (x < w) w = x;
    if (x > e) e = x;
    if (y < s) s = y;
    if (y > n) n = y;
  }
  return [w, s, e, n];
}

/** [w, s, e, n] of GeoJSON coordinates nested to any depth (several geometries at once); null without positions. */
export function bboxOfCoordinates(coordinates: unknown): [number, number, number, number] | null {
  const box: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  const visit = (c: unknown): void => {
    if (!Array.isArray(c)) return;
    if (typeof c[0] === "number" && typeof c[1] === "number") {
      box[0] = Math.min(box[0], c[0]);
      box[1] = Math.min(box[1], c[1]);
      box[2] = Math.max(box[2], c[0]);
      box[3] = Math.max(box[3], c[1]);
    } else c.forEach(visit);
  };
  visit(coordinates);
  return box[0] <= box[2] ? box : null;
}

/**
 * Where segment p1→p2 crosses q1→q2, as the fraction t along p (0..1), or null.
 * Inputs are in a local planar frame (metres), so the test is exact enough at city scale.
 */
export function crossingFraction(
  p1: readonly [number, number],
  p2: readonly [number, number],
  q1: readonly [number, number],
  q2: readonly [number, number],
): number | null {
  const rx = p2[0] - p1[0];
  const ry = p2[1] - p1[1];
  const sx = q2[0] - q1[0];
  const sy = q2[1] - q1[1];
  const denom = rx * sy - ry * sx;
  if (denom === 0) return null;
  const qpx = q1[0] - p1[0];
  const qpy = q1[1] - p1[1];
  const t = (qpx * sy - qpy * sx) / denom;
  const u = (qpx * ry - qpy * rx) / denom;
  return t >= 0 && t <= 1 && u >= 0 && u <= 1 ? t : null;
}

/** Compass bearing (0 = north, clockwise, 0..360) of a planar vector (x east, y north). */
export function bearingOf(dx: number, dy: number): number {
  const deg = (Math.atan2(dx, dy) * 180) / Math.PI;
  return deg < 0 ? deg + 360 : deg;
}

/** Smallest angle between two bearings, 0..180. */
export function angleBetween(a: number, b: number): number {
  const d = Math.abs(a - b) % 360;
  return d > 180 ? 360 - d : d;
}
