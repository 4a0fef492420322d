import Flatbush from "flatbush";
import orient from "robust-orientation";
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
    const polygon = new IndexedRings(rings);
    for (const i of network.searchBox(...polygon.bbox)) {
      const seg = network.segments[i];
      if (chosen.has(i) || !filter(seg)) continue;
      const hit = mode === "within" ? polygon.containsLine(seg.coords) : polygon.meetsLine(seg.coords);
      if (hit) chosen.add(i);
    }
  }
  return [...chosen].map((i) => network.segments[i]).sort((a, b) => a.id - b.id);
}

/**
 * A polygon (outer ring, then holes) with a flatbush R-tree over its edges. Every test touches only the
 * edges near the point or line at hand, so selecting with a 10,000-position polygon costs about as much
 * as with a square, instead of (segments × vertices). Orientation is exact (robust-orientation).
 */
export class IndexedRings {
  private readonly edges: [LonLat, LonLat][] = [];
  private readonly ringOf: number[] = [];
  private readonly ringCount: number;
  private readonly index: Flatbush;
  readonly bbox: [number, number, number, number];

  constructor(rings: PolygonRings) {
    this.ringCount = rings.length;
    rings.forEach((ring, r) => {
      for (let i = 1; i < ring.length; i++) {
        this.edges.push([ring[i - 1], ring[i]]);
        this.ringOf.push(r);
      }
      // Close a ring given open, as the classifier before did.
      const [first, last] = [ring[0], ring[ring.length - 1]];
      if (first[0] !== last[0] || first[1] !== last[1]) {
        this.edges.push([last, first]);
        this.ringOf.push(r);
      }
    });
    this.index = new Flatbush(Math.max(this.edges.length, 1));
    for (const [a, b] of this.edges) this.index.add(...edgeBox(a, b));
    if (this.edges.length === 0) this.index.add(0, 0, 0, 0);
    this.index.finish();
    this.bbox = [this.index.minX, this.index.minY, this.index.maxX, this.index.maxY];
  }

  /** -1 inside, 0 on the boundary, 1 outside (holes are outside). */
  classify(p: LonLat): -1 | 0 | 1 {
    const crossings = new Array<number>(this.ringCount).fill(0);
    // Edges that an eastward ray from p can meet, plus any edge through p itself.
    for (const e of this.index.search(p[0], p[1], Infinity, p[1])) {
      const [a, b] = this.edges[e];
      const o = orient(a, b, p);
      if (o === 0 && onSegmentBox(p, a, b)) return 0;
      // Half-open rule: an edge counts when p's latitude is in [low, high) of it.
      if (a[1] > p[1] === b[1] > p[1]) continue;
      const [low, high] = a[1] < b[1] ? [a, b] : [b, a];
      if (orient(high, low, p) > 0) crossings[this.ringOf[e]]++;
    }
    if (crossings[0] % 2 === 0) return 1;
    return crossings.slice(1).some((c) => c % 2 === 1) ? 1 : -1;
  }

  /** Some vertex inside or on the boundary, or an edge crossing a ring. */
  meetsLine(line: LonLat[]): boolean {
    return line.some((p) => this.classify(p) <= 0) || this.crossedBy(line);
  }

  /** Inside or on the boundary throughout: all vertices in and no edge leaving through a ring. */
  containsLine(line: LonLat[]): boolean {
    if (!line.every((p) => this.classify(p) <= 0)) return false;
    if (this.crossedBy(line)) return false;
    // Edges between two boundary vertices may still run outside (concave corner): check their midpoints.
    for (let i = 1; i < line.length; i++) {
      const mid: LonLat = [(line[i - 1][0] + line[i][0]) / 2, (line[i - 1][1] + line[i][1]) / 2];
      if (this.classify(mid) === 1) return false;
    }
    return true;
  }

  private crossedBy(line: LonLat[]): boolean {
    for (let i = 1; i < line.length; i++)
      for (const e of this.index.search(...edgeBox(line[i - 1], line[i])))
        if (edgesCrossProperly(line[i - 1], line[i], this.edges[e][0], this.edges[e][1])) return true;
    return false;
  }
}

function edgeBox(a: LonLat, b: LonLat): [number, number, number, number] {
  return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[0], b[0]), Math.max(a[1], b[1])];
}

function onSegmentBox(p: LonLat, a: LonLat, b: LonLat): boolean {
  return (
    p[0] >= Math.min(a[0], b[0]) &&
    p[0] <= Math.max(a[0], b[0]) &&
    p[1] >= Math.min(a[1], b[1]) &&
    p[1] <= Math.max(a[1], b[1])
  );
}

/** -1 inside, 0 on the boundary, 1 outside a polygon with holes. */
export function classifyInPolygon(p: LonLat, rings: PolygonRings): -1 | 0 | 1 {
  return new IndexedRings(rings).classify(p);
}

export function lineIntersectsPolygon(line: LonLat[], rings: PolygonRings): boolean {
  return new IndexedRings(rings).meetsLine(line);
}

export function lineWithinPolygon(line: LonLat[], rings: PolygonRings): boolean {
  return new IndexedRings(rings).containsLine(line);
}

/** Planar test in degrees: adequate for the few-kilometre shapes this interface selects with. */
function edgesCrossProperly(a: LonLat, b: LonLat, c: LonLat, d: LonLat): boolean {
  const o1 = Math.sign(orient(a, b, c));
  const o2 = Math.sign(orient(a, b, d));
  const o3 = Math.sign(orient(c, d, a));
  const o4 = Math.sign(orient(c, d, b));
  return o1 * o2 < 0 && o3 * o4 < 0;
}
