/**
 * Flow-map geometry, DOM-free: zone centroids and the curved arcs between them. Distances are planar in a
 * local equirectangular projection (x scaled by cos(latitude)), plenty for zones within one city or region.
 */
import type { Geometry, Position } from "geojson";

export type LngLat = [number, number];

const toRad = Math.PI / 180;

/** Shoelace area (signed) and area-weighted centre of a closed ring, in degrees. */
function ringMoments(ring: Position[]): { area: number; cx: number; cy: number } {
  let area = 0;
  let cx = 0;
  let cy = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const [x0, y0] = ring[i];
    const [x1, y1] = ring[i + 1];
    const cross = x0 * y1 - x1 * y0;
    area += cross;
    cx += (x0 + x1) * cross;
    cy += (y0 + y1) * cross;
  }
  area /= 2;
  return area === 0 ? { area: 0, cx: 0, cy: 0 } : { area, cx: cx / (6 * area), cy: cy / (6 * area) };
}

/**
 * Area centroid of (multi)polygons; holes subtract whatever their winding (files in the wild do not all
 * follow RFC 7946's). The centroid is affine-invariant, so computing it in plain degrees is exact enough.
 */
function polygonCentroid(polygons: Position[][][]): LngLat | null {
  let total = 0;
  let x = 0;
  let y = 0;
  for (const rings of polygons)
    rings.forEach((ring, i) => {
      const m = ringMoments(ring);
      const weight = Math.abs(m.area) * (i === 0 ? 1 : -1);
      total += weight;
      x += m.cx * weight;
      y += m.cy * weight;
    });
  return total > 0 ? [x / total, y / total] : null;
}

/** Planar length of a step in metres-like units (degrees with longitude shrunk by cos(latitude)). */
function stepLength(a: Position, b: Position): number {
  const k = Math.cos(((a[1] + b[1]) / 2) * toRad);
  return Math.hypot((b[0] - a[0]) * k, b[1] - a[1]);
}

/** The point halfway along the lines' total length (a line zone's gate sits at its middle by default). */
function lineMidpoint(lines: Position[][]): LngLat | null {
  const total = lines.reduce((sum, l) => sum + l.slice(1).reduce((s, p, i) => s + stepLength(l[i], p), 0), 0);
  let left = total / 2;
  for (const line of lines)
    for (let i = 1; i < line.length; i++) {
      const step = stepLength(line[i - 1], line[i]);
      if (step >= left && step > 0) {
        const t = left / step;
        const [a, b] = [line[i - 1], line[i]];
        return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
      }
      left -= step;
    }
  const first = lines.find((l) => l.length > 0)?.[0];
  return first ? [first[0], first[1]] : null;
}

function vertexMean(coords: Position[]): LngLat | null {
  if (coords.length === 0) return null;
  const sum = coords.reduce((s, p) => [s[0] + p[0], s[1] + p[1]], [0, 0]);
  return [sum[0] / coords.length, sum[1] / coords.length];
}

/** Where a zone's flows start and end: polygons at their area centroid, lines at their midpoint. */
export function zoneAnchor(geometry: Geometry | null): LngLat | null {
  if (!geometry) return null;
  switch (geometry.type) {
    case "Point":
      return [geometry.coordinates[0], geometry.coordinates[1]];
    case "MultiPoint":
      return vertexMean(geometry.coordinates);
    case "LineString":
      return lineMidpoint([geometry.coordinates]);
    case "MultiLineString":
      return lineMidpoint(geometry.coordinates);
    case "Polygon":
      return polygonCentroid([geometry.coordinates]) ?? vertexMean(geometry.coordinates.flat());
    case "MultiPolygon":
      return polygonCentroid(geometry.coordinates) ?? vertexMean(geometry.coordinates.flat(2));
    default:
      return null;
  }
}

/**
 * A flow's curve from `a` to `b`: a quadratic Bézier bowed to the right of the travel direction by `bend`
 * × the distance, so A→B and B→A become two separate arcs. Returns `steps + 1` points and the point and
 * compass bearing (degrees clockwise from north) at `arrowAt` along it, where the direction arrow goes.
 */
export function flowArc(
  a: LngLat,
  b: LngLat,
  { bend = 0.18, steps = 24, arrowAt = 0.6 } = {},
): { line: LngLat[]; arrow: LngLat; bearing: number } {
  const k = Math.cos(((a[1] + b[1]) / 2) * toRad) || 1;
  // Local planar frame: x = longitude × k, so perpendiculars are true right angles on the ground.
  const [ax, ay, bx, by] = [a[0] * k, a[1], b[0] * k, b[1]];
  const [dx, dy] = [bx - ax, by - ay];
  // (dy, -dx) is the direction rotated 90° clockwise: the right-hand side when facing from a to b.
  const [cx, cy] = [(ax + bx) / 2 + dy * bend, (ay + by) / 2 - dx * bend];
  const at = (t: number): [number, number] => {
    const u = 1 - t;
    return [u * u * ax + 2 * u * t * cx + t * t * bx, u * u * ay + 2 * u * t * cy + t * t * by];
  };
  const line: LngLat[] = [];
  for (let i = 0; i <= steps; i++) {
    const [x, y] = at(i / steps);
    line.push([x / k, y]);
  }
  const [px, py] = at(arrowAt);
  // Derivative of the Bézier at t: 2(1-t)(c-a) + 2t(b-c).
  const tx = 2 * (1 - arrowAt) * (cx - ax) + 2 * arrowAt * (bx - cx);
  const ty = 2 * (1 - arrowAt) * (cy - ay) + 2 * arrowAt * (by - cy);
  const bearing = (((Math.atan2(tx, ty) / toRad) % 360) + 360) % 360;
  return { line, arrow: [px / k, py], bearing };
}
