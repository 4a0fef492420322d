import Flatbush from "flatbush";
import type { Network } from "../network/network.js";
import type { LonLat } from "../network/types.js";
import { bboxOfPoints, crossingFraction, pointInMultiPolygon, type PolygonRings } from "./geometry.js";

/** A zone as the assignment needs it (from a normalised zone-set feature). */
export interface ZoneDef {
  name: string;
  id: number | null;
  isPass: boolean;
  /** Compass degrees; only trips travelling within DIRECTION_TOLERANCE of it count. */
  direction: number | null;
  isBidi: boolean;
  kind: "polygon" | "line";
}

/** Trips whose heading is within this many degrees of a zone's direction count as travelling that way. */
export const DIRECTION_TOLERANCE_DEG = 45;
/** Width of a line zone's gate when the zone gives no gate_size: catches both carriageways of a road. */
export const DEFAULT_GATE_SIZE_M = 30;

/** How one network segment meets one pass-through zone. */
export interface SegmentZoneHit {
  zone: number;
  /** Fraction of the segment's length where it first meets the zone, travelling along / against its geometry. */
  atForward: number;
  atBackward: number;
  /** Planar vector (metres east, north) of forward travel inside a polygon, or of the segment where it crosses a gate. */
  dx: number;
  dy: number;
}

export interface CompiledZoneSet {
  zones: ZoneDef[];
  /** Trip ends are tested against non-pass polygons through this index (item i = endZones[i]). */
  endIndex: Flatbush | null;
  endZones: { zone: number; polygons: PolygonRings[] }[];
  /** Network segment index → the pass-through zones it meets. */
  passBySegment: Map<number, SegmentZoneHit[]>;
}

interface FeatureLike {
  geometry: { type: string; coordinates: unknown };
  properties: Record<string, unknown>;
}

/** Planar metres around a reference point, accurate at city scale (cheap-ruler factors). */
class LocalFrame {
  constructor(
    private readonly network: Network,
    private readonly origin: LonLat,
  ) {}
  toXY(p: LonLat): [number, number] {
    return [(p[0] - this.origin[0]) * this.network.ruler.kx, (p[1] - this.origin[1]) * this.network.ruler.ky];
  }
  toLonLat(x: number, y: number): LonLat {
    return [this.origin[0] + x / this.network.ruler.kx, this.origin[1] + y / this.network.ruler.ky];
  }
}

export function zoneDefOf(f: FeatureLike): ZoneDef {
  const p = f.properties;
  const kind = /line/i.test(f.geometry.type) ? "line" : "polygon";
  return {
    name: String(p.name),
    id: typeof p.id === "number" ? p.id : null,
    isPass: kind === "line" || p.is_pass === 1 || p.is_pass === true,
    direction: typeof p.direction === "number" ? p.direction : null,
    isBidi: p.is_bidi === 1 || p.is_bidi === true,
    kind,
  };
}

function polygonsOf(geometry: FeatureLike["geometry"]): PolygonRings[] {
  if (geometry.type === "Polygon") return [geometry.coordinates as PolygonRings];
  if (geometry.type === "MultiPolygon") return geometry.coordinates as PolygonRings[];
  return [];
}

function linesOf(geometry: FeatureLike["geometry"]): LonLat[][] {
  if (geometry.type === "LineString") return [geometry.coordinates as LonLat[]];
  if (geometry.type === "MultiLineString") return geometry.coordinates as LonLat[][];
  return [];
}

/** Compiles zones against a network so each trip needs only per-segment look-ups. */
export function compileZoneSet(features: FeatureLike[], network: Network): CompiledZoneSet {
  const zones = features.map(zoneDefOf);
  const endZones: CompiledZoneSet["endZones"] = [];
  const passBySegment = new Map<number, SegmentZoneHit[]>();
  const addHit = (segIdx: number, hit: SegmentZoneHit) => {
    const list = passBySegment.get(segIdx);
    if (list) list.push(hit);
    else passBySegment.set(segIdx, [hit]);
  };
  features.forEach((f, zone) => {
    const def = zones[zone];
    if (def.kind === "polygon" && !def.isPass) endZones.push({ zone, polygons: polygonsOf(f.geometry) });
    else if (def.kind === "polygon")
      polygonHits(network, zone, polygonsOf(f.geometry)).forEach(([s, h]) => addHit(s, h));
    else gateHits(network, zone, gatesOf(network, f)).forEach(([s, h]) => addHit(s, h));
  });
  return { zones, endIndex: indexEndZones(endZones), endZones, passBySegment };
}

function indexEndZones(endZones: CompiledZoneSet["endZones"]): Flatbush | null {
  if (endZones.length === 0) return null;
  const index = new Flatbush(endZones.length);
  for (const z of endZones) index.add(...bboxOfPoints(z.polygons.flatMap((rings) => rings[0])));
  index.finish();
  return index;
}

/** Non-pass zones of the set that contain the point. */
export function endZonesAt(set: CompiledZoneSet, p: LonLat): number[] {
  if (!set.endIndex) return [];
  const found: number[] = [];
  for (const i of set.endIndex.search(p[0], p[1], p[0], p[1])) {
    if (pointInMultiPolygon(p, set.endZones[i].polygons)) found.push(set.endZones[i].zone);
  }
  return found.sort((a, b) => a - b);
}

/** Sampling step along segments when measuring how they run inside a polygon. */
const SAMPLE_STEP_M = 5;

function polygonHits(network: Network, zone: number, polygons: PolygonRings[]): [number, SegmentZoneHit][] {
  const [w, s, e, n] = bboxOfPoints(polygons.flatMap((rings) => rings[0]));
  const frame = new LocalFrame(network, [w, s]);
  const hits: [number, SegmentZoneHit][] = [];
  for (const segIdx of network.searchBox(w, s, e, n)) {
    const xy = network.segments[segIdx].coords.map((c) => frame.toXY(c));
    const inside = insideRun(xy, (x, y) => pointInMultiPolygon(frame.toLonLat(x, y), polygons));
    if (inside) hits.push([segIdx, { zone, ...inside }]);
  }
  return hits;
}

/**
 * Walks a polyline in small steps and sums the part inside a region: the vector
 * of forward travel inside, and where the line first enters from either end.
 */
function insideRun(
  xy: [number, number][],
  isInside: (x: number, y: number) => boolean,
): Omit<SegmentZoneHit, "zone"> | null {
  const total = polylineLength(xy);
  if (total === 0) return null;
  let walked = 0;
  let first = -1;
  let last = -1;
  let dx = 0;
  let dy = 0;
  for (let i = 1; i < xy.length; i++) {
    const [ax, ay] = xy[i - 1];
    const ex = xy[i][0] - ax;
    const ey = xy[i][1] - ay;
    const len = Math.hypot(ex, ey);
    const steps = Math.max(1, Math.ceil(len / SAMPLE_STEP_M));
    for (let k = 0; k < steps; k++) {
      const mid = (k + 0.5) / steps;
      if (!isInside(ax + ex * mid, ay + ey * mid)) continue;
      const at = (walked + len * mid) / total;
      if (first < 0) first = at;
      last = at;
      dx += ex / steps;
      dy += ey / steps;
    }
    walked += len;
  }
  return first < 0 ? null : { atForward: first, atBackward: 1 - last, dx, dy };
}

function polylineLength(xy: [number, number][]): number {
  let len = 0;
  for (let i = 1; i < xy.length; i++) len += Math.hypot(xy[i][0] - xy[i - 1][0], xy[i][1] - xy[i - 1][1]);
  return len;
}

/**
 * A line zone follows a road; traffic is counted where it crosses the zone's
 * gate: a short line across the zone, perpendicular to it, at the custom gate
 * point (gate_lat/gate_lng) or else at the middle of the line, gate_size metres wide.
 */
export function gatesOf(network: Network, f: FeatureLike): [LonLat, LonLat][] {
  const p = f.properties;
  const width = typeof p.gate_size === "number" && p.gate_size > 0 ? p.gate_size : DEFAULT_GATE_SIZE_M;
  const custom: LonLat | null =
    typeof p.gate_lat === "number" && typeof p.gate_lng === "number" ? [p.gate_lng, p.gate_lat] : null;
  const lines = linesOf(f.geometry).filter((l) => l.length >= 2);
  if (lines.length === 0) return [];
  const line = custom ? closestLine(network, lines, custom) : longestLine(network, lines);
  const at = custom ?? network.ruler.along(line, network.ruler.lineDistance(line) / 2);
  const on = network.ruler.pointOnLine(line, at);
  const a = line[on.index];
  const b = line[on.index + 1];
  const heading = network.ruler.bearing(a, b);
  const centre = on.point;
  return [
    [
      network.ruler.destination(centre, width / 2, heading - 90),
      network.ruler.destination(centre, width / 2, heading + 90),
    ],
  ];
}

function closestLine(network: Network, lines: LonLat[][], p: LonLat): LonLat[] {
  let best = lines[0];
  let bestD = Infinity;
  for (const l of lines) {
    const d = network.ruler.distance(p, network.ruler.pointOnLine(l, p).point);
    if (d < bestD) [best, bestD] = [l, d];
  }
  return best;
}

function longestLine(network: Network, lines: LonLat[][]): LonLat[] {
  return lines.reduce((a, b) => (network.ruler.lineDistance(b) > network.ruler.lineDistance(a) ? b : a));
}

function gateHits(network: Network, zone: number, gates: [LonLat, LonLat][]): [number, SegmentZoneHit][] {
  const hits: [number, SegmentZoneHit][] = [];
  for (const [g1, g2] of gates) {
    const [w, s, e, n] = bboxOfPoints([g1, g2]);
    const frame = new LocalFrame(network, [w, s]);
    const q1 = frame.toXY(g1);
    const q2 = frame.toXY(g2);
    for (const segIdx of network.searchBox(w, s, e, n)) {
      const hit = firstCrossing(
        network.segments[segIdx].coords.map((c) => frame.toXY(c)),
        q1,
        q2,
      );
      if (hit) hits.push([segIdx, { zone, ...hit }]);
    }
  }
  return hits;
}

function firstCrossing(
  xy: [number, number][],
  q1: [number, number],
  q2: [number, number],
): Omit<SegmentZoneHit, "zone"> | null {
  const total = polylineLength(xy);
  let walked = 0;
  for (let i = 1; i < xy.length; i++) {
    const len = Math.hypot(xy[i][0] - xy[i - 1][0], xy[i][1] - xy[i - 1][1]);
    const t = crossingFraction(xy[i - 1], xy[i], q1, q2);
    if (t !== null) {
      const at = total > 0 ? (walked + t * len) / total : 0;
      return { atForward: at, atBackward: 1 - at, dx: xy[i][0] - xy[i - 1][0], dy: xy[i][1] - xy[i - 1][1] };
    }
    walked += len;
  }
  return null;
}
