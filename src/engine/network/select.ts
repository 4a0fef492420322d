import classifyPoint from "robust-point-in-polygon";
import type { Network } from "./network.js";
import type { LonLat, Segment } from "./types.js";

/** How a shape selects a segment: the whole line inside it, or any part of it. */
export type GeomMode = "within" | "intersects";

/** Rings of one polygon: the outer ring first, then holes; positions [lon, lat]. */
export type PolygonRings = LonLat[][];

export type Selector =
  | { kind: "nearest"; point: LonLat; count: number }
  | { kind: "radius"; point: LonLat; radiusM: number; mode: GeomMode }
  | { kind: "polygon"; polygons: PolygonRings[]; mode: GeomMode }
  | { kind: "segment_ids"; ids: number[] };

export interface Selection {
  /** Selected segments in answer order (see selectSegments). */
  segments: Segment[];
  /** Ids of a segment_ids selector that the network does not hold. */
  unknownIds: number[];
}

/**
 * Segments a selector picks among those passing `filter`. Order: nearest and
 * radius closest first (ties by id); polygon by id; segment_ids in request
 * order without repeats.
 */
export function selectSegments(
  network: Network,
  selector: Selector,
  filter: (s: Segment) => boolean,
): Selection {
  switch (selector.kind) {
    case "nearest":
      return found(network.nearest(selector.point, selector.count, filter).map((h) => h.segment));
    case "radius":
      return found(selectInRadius(network, selector.point, selector.radiusM, selector.mode, filter));
    case "polygon":
      return found(selectInPolygons(network, selector.polygons, selector.mode, filter));
    case "segment_ids":
      return selectByIds(network, selector.ids, filter);
  }
}

const found = (segments: Segment[]): Selection => ({ segments, unknownIds: [] });

function selectInRadius(
  network: Network,
  point: LonLat,
  radiusM: number,
  mode: GeomMode,
  filter: (s: Segment) => boolean,
): Segment[] {
  const touching = network.withinRadius(point, radiusM, filter).map((h) => h.segment);
  if (mode === "intersects") return touching;
  // A circle is convex, so a polyline lies inside it exactly when all its vertices do.
  return touching.filter((s) => s.coords.every((c) => network.ruler.distance(point, c) <= radiusM));
}

function selectByIds(network: Network, ids: number[], filter: (s: Segment) => boolean): Selection {
  const segments: Segment[] = [];
  const unknownIds: number[] = [];
  for (const id of new Set(ids)) {
    const s = network.segmentById(id);
    if (!s) unknownIds.push(id);
    else if (filter(s)) segments.push(s);
  }
  return { segments, unknownIds };
}

function selectInPolygons(
  network: Network,
  polygons: PolygonRings[],
  mode: GeomMode,
  filter: (s: Segment) => boolean,
): Segment[] {
  const chosen = new Set<number>();
  for (const rings of polygons) {
    const [w, s, e, n] = bboxOfRing(rings[0]);
    for (const i of network.searchBox(w, s, e, n)) {
      const seg = network.segments[i];
      if (chosen.has(i) || !filter(seg)) continue;
      const hit =
        mode === "within" ? lineWithinPolygon(seg.coords, rings) : lineIntersectsPolygon(seg.coords, rings);
      if (hit) chosen.add(i);
    }
  }
  return [...chosen].map((i) => network.segments[i]).sort((a, b) => a.id - b.id);
}

function bboxOfRing(ring: LonLat[]): [number, number, number, number] {
  const xs = ring.map((p) => p[0]);
  const ys = ring.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

/** -1 inside, 0 on the boundary, 1 outside a polygon with holes. */
export function classifyInPolygon(p: LonLat, rings: PolygonRings): -1 | 0 | 1 {
  const outer = classifyPoint(openRing(rings[0]), p);
  if (outer !== -1) return outer;
  for (const hole of rings.slice(1)) {
    const h = classifyPoint(openRing(hole), p);
    if (h === -1) return 1;
    if (h === 0) return 0;
  }
  return -1;
}

/** GeoJSON rings repeat the first position at the end; the classifier wants it once. */
function openRing(ring: LonLat[]): LonLat[] {
  const [first, last] = [ring[0], ring[ring.length - 1]];
  return first[0] === last[0] && first[1] === last[1] ? ring.slice(0, -1) : ring;
}

export function lineIntersectsPolygon(line: LonLat[], rings: PolygonRings): boolean {
  if (line.some((p) => classifyInPolygon(p, rings) <= 0)) return true;
  return lineCrossesRings(line, rings);
}

/** Inside or on the boundary throughout: all vertices in and no edge leaving through a ring. */
export function lineWithinPolygon(line: LonLat[], rings: PolygonRings): boolean {
  if (!line.every((p) => classifyInPolygon(p, rings) <= 0)) return false;
  if (lineCrossesRings(line, rings)) return false;
  // Edges between two boundary vertices may still run outside (concave corner): check their midpoints.
  for (let i = 1; i < line.length; i++) {
    const mid: LonLat = [(line[i - 1][0] + line[i][0]) / 2, (line[i - 1][1] + line[i][1]) / 2];
    if (classifyInPolygon(mid, rings) === 1) return false;
  }
  return true;
}

function lineCrossesRings(line: LonLat[], rings: PolygonRings): boolean {
  for (let i = 1; i < line.length; i++)
    for (const ring of rings)
      for (let j = 1; j < ring.length; j++)
        if (edgesCrossProperly(line[i - 1], line[i], ring[j - 1], ring[j])) return true;
  return false;
}

/** Planar test in degrees: adequate for the few-kilometre shapes this interface selects with. */
function edgesCrossProperly(a: LonLat, b: LonLat, c: LonLat, d: LonLat): boolean {
  const o1 = orient(a, b, c);
  const o2 = orient(a, b, d);
  const o3 = orient(c, d, a);
  const o4 = orient(c, d, b);
  return o1 * o2 < 0 && o3 * o4 < 0;
}

function orient(a: LonLat, b: LonLat, c: LonLat): number {
  return Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}
