import type { LonLat } from "../network/types.js";
import type { PathStep } from "../trips/types.js";
import { alongMoveM, type Candidate } from "./candidates.js";
import type { MatchContext } from "./context.js";
import { doubleRow } from "./rows.js";

/** A matched position with the time of its GPS point. */
export interface MatchedPosition {
  candidate: Candidate;
  t: number;
}

/** A stretch of one segment in travel order, located by metres from the start of the piece. */
interface Traversal {
  segIndex: number;
  forward: boolean;
  startAlongM: number;
  endAlongM: number;
  fromM: number;
  toM: number;
}

export interface AssembledPath {
  path: PathStep[];
  lengthM: number;
  origin: LonLat;
  destination: LonLat;
  startT: number;
  endT: number;
}

/**
 * Turns the decoded positions of one trip piece into its path: the stretches
 * between consecutive positions (re-routed exactly as the transition costs
 * were), contiguous stretches of one segment merged, and enter/exit times
 * interpolated linearly by distance between the positions' times. A small
 * step back along the same segment (within `backwardToleranceM`) holds the
 * position. Null when the piece does not move along the network.
 */
export function assemblePath(
  ctx: MatchContext,
  positions: MatchedPosition[],
  backwardToleranceM: number,
): AssembledPath | null {
  const traversals: Traversal[] = [];
  const distanceAt = doubleRow();
  distanceAt.push(0);
  let cursorM = 0;
  let at = positions[0].candidate;
  for (let k = 1; k < positions.length; k++) {
    const next = positions[k].candidate;
    const moveM = alongMoveM(at, next, backwardToleranceM);
    if (moveM === 0) {
      distanceAt.push(cursorM);
      continue;
    }
    const legs = legBetween(ctx, at, next, moveM);
    for (let l = 0; l < legs.length; l++) {
      const leg = legs[l];
      const lengthM = Math.abs(leg.endAlongM - leg.startAlongM);
      appendTraversal(traversals, {
        segIndex: leg.segIndex,
        forward: leg.forward,
        startAlongM: leg.startAlongM,
        endAlongM: leg.endAlongM,
        fromM: cursorM,
        toM: cursorM + lengthM,
      });
      cursorM += lengthM;
    }
    distanceAt.push(cursorM);
    at = next;
  }
  const times = doubleRow();
  for (let k = 0; k < positions.length; k++) times.push(positions[k].t);
  const path: PathStep[] = [];
  for (let k = 0; k < traversals.length; k++) {
    const tr = traversals[k];
    if (!(tr.toM > tr.fromM)) continue;
    path.push({
      segmentId: ctx.lines.id[tr.segIndex],
      forward: tr.forward,
      enterT: latestTimeAt(tr.fromM, distanceAt, times),
      exitT: earliestTimeAt(tr.toM, distanceAt, times),
    });
  }
  if (path.length === 0) return null;
  return {
    path,
    lengthM: cursorM,
    origin: positions[0].candidate.point,
    destination: at.point,
    startT: times[0],
    endT: times[times.length - 1],
  };
}

type Leg = Omit<Traversal, "fromM" | "toM">;

/** Stretches travelled from `a` to `b`: along one segment (`alongM` > 0), or out of a's segment, routed, into b's. */
function legBetween(ctx: MatchContext, a: Candidate, b: Candidate, alongM: number): Leg[] {
  if (alongM > 0) {
    return [{ segIndex: a.segIndex, forward: a.forward, startAlongM: a.alongM, endAlongM: b.alongM }];
  }
  const edges = ctx.routes.pathTo(a.exitNode, b.entryNode);
  if (!edges) throw new Error("matched transition has no route");
  const lengths = ctx.lines.lengthM;
  const legs: Leg[] = [
    {
      segIndex: a.segIndex,
      forward: a.forward,
      startAlongM: a.alongM,
      endAlongM: a.forward ? lengths[a.segIndex] : 0,
    },
  ];
  for (let k = 0; k < edges.length; k++) {
    const edge = edges[k];
    const segIndex = edge >> 1;
    const forward = (edge & 1) === 0;
    const len = lengths[segIndex];
    legs.push({ segIndex, forward, startAlongM: forward ? 0 : len, endAlongM: forward ? len : 0 });
  }
  legs.push({
    segIndex: b.segIndex,
    forward: b.forward,
    startAlongM: b.forward ? 0 : lengths[b.segIndex],
    endAlongM: b.alongM,
  });
  return legs;
}

/** Extends the last stretch when `next` continues it on the same segment; a second pass stays separate. */
function appendTraversal(traversals: Traversal[], next: Traversal): void {
  const last = traversals[traversals.length - 1];
  const continues =
    last !== undefined &&
    last.segIndex === next.segIndex &&
    last.forward === next.forward &&
    Math.abs(last.endAlongM - next.startAlongM) < 1e-6;
  if (continues) {
    last.endAlongM = next.endAlongM;
    last.toM = next.toM;
  } else traversals.push(next);
}

/** Time at distance x; where the vehicle stood still at x, the first moment there. */
function earliestTimeAt(x: number, distanceAt: number[], times: number[]): number {
  for (let j = 0; j + 1 < distanceAt.length; j++) {
    if (distanceAt[j + 1] >= x) return interpolate(x, j, distanceAt, times, false);
  }
  return times[times.length - 1];
}

/** Time at distance x; where the vehicle stood still at x, the last moment there. */
function latestTimeAt(x: number, distanceAt: number[], times: number[]): number {
  for (let j = distanceAt.length - 2; j >= 0; j--) {
    if (distanceAt[j] <= x) return interpolate(x, j, distanceAt, times, true);
  }
  return times[0];
}

/** Linear in distance between fixes j and j+1; a fix pair with no distance between them gives either time. */
function interpolate(x: number, j: number, distanceAt: number[], times: number[], late: boolean): number {
  const span = distanceAt[j + 1] - distanceAt[j];
  if (span <= 0) return late ? times[j + 1] : times[j];
  const f = Math.min(Math.max((x - distanceAt[j]) / span, 0), 1);
  return Math.round(times[j] + f * (times[j + 1] - times[j]));
}
