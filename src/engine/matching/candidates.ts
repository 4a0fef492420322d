import type { LonLat } from "../network/types.js";
import type { GpsPoint } from "../trips/types.js";
import type { MatchContext } from "./context.js";
import type { ResolvedMatchOptions } from "./options.js";

/** A directed position on the network that a GPS point may stand for. */
export interface Candidate {
  segIndex: number;
  /** Travelling along the segment's geometry (true) or against it. */
  forward: boolean;
  /** Metres from the segment's geometric start to the snapped point. */
  alongM: number;
  point: LonLat;
  /** GPS point to snapped point, metres. */
  distanceM: number;
  /** Node the vehicle enters the segment by, and metres from it to the snapped point. */
  entryNode: number;
  entryCostM: number;
  /** Node the vehicle leaves the segment by, and metres from the snapped point to it. */
  exitNode: number;
  exitCostM: number;
}

/** One kept GPS point with its candidates. */
export interface Step {
  /** Index of the point in the trip's time-sorted points. */
  pointIndex: number;
  t: number;
  position: LonLat;
  candidates: Candidate[];
}

/** Where a segment's line comes within the search radius of a point: the closest spot of one such stretch. */
interface Approach {
  segIndex: number;
  alongM: number;
  distanceM: number;
  point: LonLat;
}

/**
 * Candidates of a GPS point: every stretch of a segment's line that passes
 * within the search radius gives its closest spot (a winding road that passes
 * twice gives two), the spots at the nearest `maxCandidates` places are kept,
 * each in every direction its segment's oneway flag allows.
 */
export function candidatesOf(ctx: MatchContext, p: GpsPoint, opts: ResolvedMatchOptions): Candidate[] {
  const { network, allowed, lines } = ctx;
  const [w, s, e, n] = network.ruler.bufferPoint([p.lon, p.lat], opts.searchRadiusM);
  const approaches: Approach[] = [];
  const near = network.searchBox(w, s, e, n);
  for (let k = 0; k < near.length; k++) {
    const segIndex = near[k];
    if (allowed[segIndex] === 1) addApproaches(ctx, segIndex, p, opts.searchRadiusM, approaches);
  }
  approaches.sort(approachOrder);
  const out: Candidate[] = [];
  const places = nearestPlaces(ctx, approaches, opts.maxCandidates);
  for (let k = 0; k < places.length; k++) {
    const ap = places[k];
    const lengthM = lines.lengthM[ap.segIndex];
    const alongM = Math.min(Math.max(ap.alongM, 0), lengthM);
    const from = network.graph.edgeFrom[2 * ap.segIndex];
    const to = network.graph.edgeTo[2 * ap.segIndex];
    // Object literals, not spreads: spreading a shared base is many times slower in V8 here.
    out.push({
      segIndex: ap.segIndex,
      forward: true,
      alongM,
      point: ap.point,
      distanceM: ap.distanceM,
      entryNode: from,
      entryCostM: alongM,
      exitNode: to,
      exitCostM: lengthM - alongM,
    });
    if (lines.oneway[ap.segIndex] === 0) {
      out.push({
        segIndex: ap.segIndex,
        forward: false,
        alongM,
        point: ap.point,
        distanceM: ap.distanceM,
        entryNode: to,
        entryCostM: lengthM - alongM,
        exitNode: from,
        exitCostM: alongM,
      });
    }
  }
  return out;
}

/**
 * Nearest first, then by segment and place along it. Every field is read on every call: the third key
 * is needed rarely, and compiled code that had never read it was thrown away the first time it was.
 */
function approachOrder(x: Approach, y: Approach): number {
  const byDistance = x.distanceM - y.distanceM;
  const bySegment = x.segIndex - y.segIndex;
  const byAlong = x.alongM - y.alongM;
  return byDistance !== 0 ? byDistance : bySegment !== 0 ? bySegment : byAlong;
}

/**
 * The closest approaches at up to `maxPlaces` distinct places. Segments
 * meeting at a junction all snap to it; they count as one place, so a busy
 * junction cannot crowd the right road out of the candidates.
 */
function nearestPlaces(ctx: MatchContext, sorted: Approach[], maxPlaces: number): Approach[] {
  const kept: Approach[] = [];
  let places = 0;
  for (let a = 0; a < sorted.length; a++) {
    const ap = sorted[a];
    let samePlace = false;
    for (let k = 0; k < kept.length && !samePlace; k++) {
      samePlace = ctx.network.ruler.distance(kept[k].point, ap.point) < 0.5;
    }
    if (!samePlace && places === maxPlaces) break;
    if (!samePlace) places++;
    kept.push(ap);
  }
  return kept;
}

/**
 * Walks the segment's line in local metres (cheap-ruler's scale factors):
 * each maximal run of consecutive line pieces within `radiusM` of `p` adds
 * its closest spot. Along-distances are scaled to the segment's stored length.
 * Reads the flat line arrays of `ctx.lines` (piece lengths precomputed).
 */
function addApproaches(
  ctx: MatchContext,
  segIndex: number,
  p: GpsPoint,
  radiusM: number,
  out: Approach[],
): void {
  const { kx, ky } = ctx.network.ruler;
  const { start, lonLat, pieceM } = ctx.lines;
  const first = start[segIndex];
  const last = start[segIndex + 1] - 1;
  // Along-distances are scaled to the stored length the router uses, before the spot is made (an
  // object changed after it was made would make V8 drop the code that assumed its fields constant).
  const lineM = ctx.lines.lineM[segIndex];
  const lengthM = ctx.lines.lengthM[segIndex];
  const scale = lineM > 0 && lengthM !== lineM ? lengthM / lineM : 1;
  let cumM = 0;
  // The best spot of the current run: piece k at fraction t (the point is built only when the run ends).
  let bestK = -1;
  let bestT = 0;
  let bestAlongM = 0;
  let bestDistanceM = Infinity;
  for (let k = first; k < last; k++) {
    const x0 = lonLat[2 * k];
    const y0 = lonLat[2 * k + 1];
    const ax = (x0 - p.lon) * kx;
    const ay = (y0 - p.lat) * ky;
    const dx = (lonLat[2 * k + 2] - x0) * kx;
    const dy = (lonLat[2 * k + 3] - y0) * ky;
    const lenM = pieceM[k];
    const t = lenM > 0 ? Math.min(Math.max(-(ax * dx + ay * dy) / (lenM * lenM), 0), 1) : 0;
    const cx = ax + t * dx;
    const cy = ay + t * dy;
    const distanceM = Math.sqrt(cx * cx + cy * cy);
    if (distanceM <= radiusM) {
      if (distanceM < bestDistanceM) {
        bestK = k;
        bestT = t;
        bestAlongM = cumM + t * lenM;
        bestDistanceM = distanceM;
      }
    } else if (bestK >= 0) {
      out.push(approachAt(ctx, segIndex, bestK, bestT, bestAlongM * scale, bestDistanceM));
      bestK = -1;
      bestDistanceM = Infinity;
    }
    cumM += lenM;
  }
  if (bestK >= 0) out.push(approachAt(ctx, segIndex, bestK, bestT, bestAlongM * scale, bestDistanceM));
}

function approachAt(
  ctx: MatchContext,
  segIndex: number,
  k: number,
  t: number,
  alongM: number,
  distanceM: number,
): Approach {
  const { lonLat } = ctx.lines;
  const point: LonLat = [
    lonLat[2 * k] + t * (lonLat[2 * k + 2] - lonLat[2 * k]),
    lonLat[2 * k + 1] + t * (lonLat[2 * k + 3] - lonLat[2 * k + 1]),
  ];
  return { segIndex, alongM, distanceM, point };
}

/** Gaussian emission in log space, without the constant shared by all candidates. */
export function emissionLogProb(c: Candidate, sigmaM: number): number {
  const z = c.distanceM / sigmaM;
  return -0.5 * z * z;
}

/**
 * Metres moved along one segment in its travel direction from `a` to `b`
 * (no routing needed), or -1 when `b` is on another segment or direction or
 * lies behind `a` by more than `toleranceM`. A small step back is GPS noise
 * of a slow or waiting vehicle: it counts as not moving, not as a loop round
 * the block.
 */
export function alongMoveM(a: Candidate, b: Candidate, toleranceM: number): number {
  if (a.segIndex !== b.segIndex || a.forward !== b.forward) return -1;
  const aheadM = a.forward ? b.alongM - a.alongM : a.alongM - b.alongM;
  if (aheadM >= 0) return aheadM;
  return -aheadM <= toleranceM ? 0 : -1;
}

/** Turning back at a node onto the segment just left (the same segment, reversed). */
export function isUTurnAtNode(a: Candidate, b: Candidate): boolean {
  return a.segIndex === b.segIndex && a.forward !== b.forward && a.exitNode === b.entryNode;
}
