import Flatbush from "flatbush";
import CheapRuler from "cheap-ruler";
import { ACCESS_BIKE, ACCESS_CAR, ACCESS_FOOT, type LonLat, type Segment } from "./types.js";

export type AccessMode = "car" | "bike" | "foot";
const ACCESS_BITS: Record<AccessMode, number> = { car: ACCESS_CAR, bike: ACCESS_BIKE, foot: ACCESS_FOOT };

export interface SegmentHit {
  segment: Segment;
  /** Metres from the query point to the closest point of the segment line. */
  distanceM: number;
  /** Closest point on the segment line. */
  point: LonLat;
  /** Metres along the segment's geometry from its start to `point`. */
  alongM: number;
}

/**
 * Directed edges: segment index × 2 (+1 for travel against the geometry).
 * Junction nodes are renumbered 0..nodeCount-1 and edges kept in CSR form so
 * routing touches only typed arrays.
 */
export interface NetworkGraph {
  nodeCount: number;
  /** Per edge: compact node index of its start and end. */
  edgeFrom: Int32Array;
  edgeTo: Int32Array;
  /** CSR adjacency: out-edges of node n are outEdges[outStart[n] .. outStart[n+1]). */
  outStart: Int32Array;
  outEdges: Int32Array;
}

/**
 * One country's road network held in memory: segments, a static R-tree over
 * their bounding boxes, and a directed graph for routing.
 */
export class Network {
  readonly ruler: CheapRuler;
  readonly graph: NetworkGraph;
  private readonly index: Flatbush;
  private readonly byId = new Map<number, number>();
  private readonly byWay = new Map<number, number[]>();

  constructor(
    readonly country: string,
    readonly segments: Segment[],
  ) {
    if (segments.length === 0) throw new Error(`network ${country} has no segments`);
    this.index = new Flatbush(segments.length);
    let minLat = Infinity;
    let maxLat = -Infinity;
    segments.forEach((s, i) => {
      const [w, so, e, n] = bboxOf(s.coords);
      this.index.add(w, so, e, n);
      minLat = Math.min(minLat, so);
      maxLat = Math.max(maxLat, n);
      this.byId.set(s.id, i);
      const pieces = this.byWay.get(s.wayId);
      if (pieces) pieces.push(i);
      else this.byWay.set(s.wayId, [i]);
    });
    this.index.finish();
    this.ruler = new CheapRuler((minLat + maxLat) / 2, "meters");
    for (const pieces of this.byWay.values()) pieces.sort((a, b) => segments[a].index - segments[b].index);
    this.graph = buildGraph(segments);
  }

  get size(): number {
    return this.segments.length;
  }

  /** [west, south, east, north] of every segment. */
  get bbox(): [number, number, number, number] {
    return [this.index.minX, this.index.minY, this.index.maxX, this.index.maxY];
  }

  segmentById(id: number): Segment | undefined {
    const i = this.byId.get(id);
    return i === undefined ? undefined : this.segments[i];
  }

  /** Position of a segment in `segments` (and so its edge pair in `graph`). */
  indexOfSegment(id: number): number | undefined {
    return this.byId.get(id);
  }

  /** The pieces of one OSM way in way order, or [] for an unknown way. */
  segmentsOfWay(wayId: number): Segment[] {
    return (this.byWay.get(wayId) ?? []).map((i) => this.segments[i]);
  }

  wayIds(): IterableIterator<number> {
    return this.byWay.keys();
  }

  /** Indexes of segments whose bounding box meets the box [w, s, e, n]. */
  searchBox(w: number, s: number, e: number, n: number): number[] {
    return this.index.search(w, s, e, n);
  }

  /** Segments whose line passes within `radiusM` metres of `p`, closest first. */
  withinRadius(p: LonLat, radiusM: number, filter?: (s: Segment) => boolean): SegmentHit[] {
    const [w, s, e, n] = this.ruler.bufferPoint(p, radiusM);
    const hits: SegmentHit[] = [];
    for (const i of this.index.search(w, s, e, n)) {
      const seg = this.segments[i];
      if (filter && !filter(seg)) continue;
      const hit = this.hitOf(seg, p);
      if (hit.distanceM <= radiusM) hits.push(hit);
    }
    return hits.sort((a, b) => a.distanceM - b.distanceM || a.segment.id - b.segment.id);
  }

  /**
   * The `k` segments closest to `p`, measured to the segment line. Searches a
   * growing radius: any segment within r of p has its bounding box within r,
   * so once k lines lie within r the answer is exact.
   */
  nearest(p: LonLat, k: number, filter?: (s: Segment) => boolean, maxRadiusM = 50_000): SegmentHit[] {
    for (let r = 50; ; r *= 2) {
      const hits = this.withinRadius(p, Math.min(r, maxRadiusM), filter);
      if (hits.length >= k || r >= maxRadiusM) return hits.slice(0, k);
    }
  }

  /** Closest point of one segment to `p`. */
  hitOf(segment: Segment, p: LonLat): SegmentHit {
    const on = this.ruler.pointOnLine(segment.coords, p);
    const alongM =
      this.ruler.lineDistance(segment.coords.slice(0, on.index + 1)) +
      this.ruler.distance(segment.coords[on.index], on.point);
    return { segment, distanceM: this.ruler.distance(p, on.point), point: on.point, alongM };
  }

  /**
   * Metres travelled on a segment in one direction, from `from` (else where the travel enters it) to `to`
   * (else where it leaves it), both snapped onto it: a trip's first and last steps cover only part of theirs.
   */
  travelledM(segment: Segment, forward: boolean, from: LonLat | null, to: LonLat | null): number {
    const entry = forward ? 0 : segment.lengthM;
    const exit = forward ? segment.lengthM : 0;
    const start = from ? this.hitOf(segment, from).alongM : entry;
    const end = to ? this.hitOf(segment, to).alongM : exit;
    return Math.min(segment.lengthM, Math.max(0, forward ? end - start : start - end));
  }

  allows(segment: Segment, mode: AccessMode): boolean {
    return (segment.access & ACCESS_BITS[mode]) !== 0;
  }
}

function bboxOf(coords: LonLat[]): [number, number, number, number] {
  let w = Infinity;
  let s = Infinity;
  let e = -Infinity;
  let n = -Infinity;
  for (const [x, y] of coords) {
    if (x < w) w = x;
    if (x > e) e = x;
    if (y < s) s = y;
    if (y > n) n = y;
  }
  return [w, s, e, n];
}

/** Both directions of every segment become edges; a oneway's backward edge goes nowhere (from = to = -1). */
function buildGraph(segments: Segment[]): NetworkGraph {
  const nodeIndex = new Map<number, number>();
  const nodeOf = (osmId: number) => {
    let i = nodeIndex.get(osmId);
    if (i === undefined) nodeIndex.set(osmId, (i = nodeIndex.size));
    return i;
  };
  const edgeCount = segments.length * 2;
  const edgeFrom = new Int32Array(edgeCount).fill(-1);
  const edgeTo = new Int32Array(edgeCount).fill(-1);
  segments.forEach((s, i) => {
    const a = nodeOf(s.fromNode);
    const b = nodeOf(s.toNode);
    edgeFrom[2 * i] = a;
    edgeTo[2 * i] = b;
    if (!s.oneway) {
      edgeFrom[2 * i + 1] = b;
      edgeTo[2 * i + 1] = a;
    }
  });
  const nodeCount = nodeIndex.size;
  const outStart = new Int32Array(nodeCount + 1);
  for (let e = 0; e < edgeCount; e++) if (edgeFrom[e] >= 0) outStart[edgeFrom[e] + 1]++;
  for (let n = 0; n < nodeCount; n++) outStart[n + 1] += outStart[n];
  const fill = outStart.slice(0, nodeCount);
  const outEdges = new Int32Array(outStart[nodeCount]);
  for (let e = 0; e < edgeCount; e++) if (edgeFrom[e] >= 0) outEdges[fill[edgeFrom[e]]++] = e;
  return { nodeCount, edgeFrom, edgeTo, outStart, outEdges };
}
