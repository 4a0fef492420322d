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

/** Nearest segments within the search radius, each in every direction its oneway flag allows. */
export function candidatesOf(ctx: MatchContext, p: GpsPoint, opts: ResolvedMatchOptions): Candidate[] {
  const { network, mode } = ctx;
  const hits = network
    .withinRadius([p.lon, p.lat], opts.searchRadiusM, (s) => network.allows(s, mode))
    .slice(0, opts.maxCandidates);
  const out: Candidate[] = [];
  for (const hit of hits) {
    const segIndex = network.indexOfSegment(hit.segment.id)!;
    const lengthM = hit.segment.lengthM;
    const alongM = Math.min(Math.max(hit.alongM, 0), lengthM);
    const from = network.graph.edgeFrom[2 * segIndex];
    const to = network.graph.edgeTo[2 * segIndex];
    // Object literals, not spreads: spreading a shared base is many times slower in V8 here.
    out.push({
      segIndex,
      forward: true,
      alongM,
      point: hit.point,
      distanceM: hit.distanceM,
      entryNode: from,
      entryCostM: alongM,
      exitNode: to,
      exitCostM: lengthM - alongM,
    });
    if (!hit.segment.oneway) {
      out.push({
        segIndex,
        forward: false,
        alongM,
        point: hit.point,
        distanceM: hit.distanceM,
        entryNode: to,
        entryCostM: lengthM - alongM,
        exitNode: from,
        exitCostM: alongM,
      });
    }
  }
  return out;
}

/** Gaussian emission in log space, without the constant shared by all candidates. */
export function emissionLogProb(c: Candidate, sigmaM: number): number {
  const z = c.distanceM / sigmaM;
  return -0.5 * z * z;
}

/** A move along one segment in its travel direction from `a` to `b`: no routing needed. */
export function isForwardMoveOnSegment(a: Candidate, b: Candidate): boolean {
  if (a.segIndex !== b.segIndex || a.forward !== b.forward) return false;
  return a.forward ? b.alongM >= a.alongM : b.alongM <= a.alongM;
}

/** Turning back at a node onto the segment just left (the same segment, reversed). */
export function isUTurnAtNode(a: Candidate, b: Candidate): boolean {
  return a.segIndex === b.segIndex && a.forward !== b.forward && a.exitNode === b.entryNode;
}
