import Flatbush from "flatbush";
import type { Network } from "./network.js";
import type { LonLat, Segment } from "./types.js";

/**
 * A polygon (outer ring, then holes) with an R-tree over its edges, so both
 * the point-in-polygon ray and edge-crossing tests touch only nearby edges.
 * Inside means the even-odd rule over all rings; planar in lon/lat, which is
 * exact enough for the city-sized polygons zones are drawn with.
 */
export class IndexedPolygon {
  private readonly edges: [LonLat, LonLat][] = [];
  private readonly index: Flatbush;
  readonly bbox: [number, number, number, number];

  constructor(rings: LonLat[][]) {
    for (const ring of rings)
      for (let i = 0; i + 1 < ring.length; i++) this.edges.push([ring[i], ring[i + 1]]);
    this.index = new Flatbush(Math.max(this.edges.length, 1));
    for (const [a, b] of this.edges) this.index.add(...edgeBox(a, b));
    if (this.edges.length === 0) this.index.add(0, 0, 0, 0);
    this.index.finish();
    this.bbox = [this.index.minX, this.index.minY, this.index.maxX, this.index.maxY];
  }

  contains([x, y]: LonLat): boolean {
    let inside = false;
    // Only edges spanning the point's latitude east of it can cross the eastward ray.
    for (const i of this.index.search(x, y, Infinity, y)) {
      const [[x1, y1], [x2, y2]] = this.edges[i];
      if (y1 > y !== y2 > y && x < ((x2 - x1) * (y - y1)) / (y2 - y1) + x1) inside = !inside;
    }
    return inside;
  }

  /** True when the line has a vertex inside or an edge touching or crossing the boundary. */
  meetsLine(coords: LonLat[]): boolean {
    if (coords.some((p) => this.contains(p))) return true;
    for (let i = 0; i + 1 < coords.length; i++) {
      const [a, b] = [coords[i], coords[i + 1]];
      for (const e of this.index.search(...edgeBox(a, b)))
        if (segmentsIntersect(a, b, this.edges[e][0], this.edges[e][1])) return true;
    }
    return false;
  }
}

/** Segments of the network whose line meets the polygon. */
export function segmentsInPolygon(
  network: Network,
  polygon: IndexedPolygon,
  filter: (s: Segment) => boolean = () => true,
): Segment[] {
  const [w, s, e, n] = polygon.bbox;
  return network
    .searchBox(w, s, e, n)
    .map((i) => network.segments[i])
    .filter((segment) => filter(segment) && polygon.meetsLine(segment.coords));
}

function edgeBox([ax, ay]: LonLat, [bx, by]: LonLat): [number, number, number, number] {
  return [Math.min(ax, bx), Math.min(ay, by), Math.max(ax, bx), Math.max(ay, by)];
}

function orientation([ax, ay]: LonLat, [bx, by]: LonLat, [cx, cy]: LonLat): number {
  return Math.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax));
}

function onSegment(a: LonLat, b: LonLat, p: LonLat): boolean {
  return (
    Math.min(a[0], b[0]) <= p[0] &&
    p[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= p[1] &&
    p[1] <= Math.max(a[1], b[1])
  );
}

/** Closed-segment intersection, touching and collinear overlap included. */
export function segmentsIntersect(a: LonLat, b: LonLat, c: LonLat, d: LonLat): boolean {
  const o1 = orientation(a, b, c);
  const o2 = orientation(a, b, d);
  const o3 = orientation(c, d, a);
  const o4 = orientation(c, d, b);
  if (o1 !== o2 && o3 !== o4) return true;
  return (
    (o1 === 0 && onSegment(a, b, c)) ||
    (o2 === 0 && onSegment(a, b, d)) ||
    (o3 === 0 && onSegment(c, d, a)) ||
    (o4 === 0 && onSegment(c, d, b))
  );
}
