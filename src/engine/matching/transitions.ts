import type { MatchContext } from "./context.js";
import { alongMoveM, isUTurnAtNode, type Candidate, type Step } from "./candidates.js";
import type { ResolvedMatchOptions } from "./options.js";
import { doubleRow } from "./rows.js";

/** Straight-line metres between the two GPS points (not the snapped ones), as Newson & Krumm compare. */
export function greatCircleM(ctx: MatchContext, a: Step, b: Step): number {
  return ctx.network.ruler.distance(a.position, b.position);
}

/**
 * How far a route between two steps may be searched: a multiple of the
 * straight line, capped by what the vehicle could drive in Δt (fixes without
 * a usable time difference, e.g. a drawn track, get no speed cap) and by the
 * detour the transition model still deems possible: `maxDetourBetas` × β
 * beyond the straight line has probability e^-maxDetourBetas. `unseenDrive`:
 * the search reached no road as near the next fix as its nearest one, and the
 * vehicle may have driven Δt at `gapRouteSpeedMps` while unseen (a loop, a
 * hairpin road), when that is longer.
 */
export function routeBoundM(gcM: number, dtS: number, o: ResolvedMatchOptions, unseenDrive = false): number {
  const byLine = Math.max(o.minRouteBoundM, o.routeBoundFactor * gcM + o.routeBoundSlackM);
  const byShape = unseenDrive ? Math.max(byLine, dtS * o.gapRouteSpeedMps) : byLine;
  const byModel = gcM + o.maxDetourBetas * betaM(dtS, o);
  if (dtS <= 0) return Math.min(byShape, byModel);
  return Math.min(byShape, byModel, dtS * o.maxSpeedMps + 2 * o.searchRadiusM);
}

/** β grows with the sampling interval: longer gaps leave more room for detours the points do not show. */
export function betaM(dtS: number, o: ResolvedMatchOptions): number {
  return Math.max(o.betaMinM, o.betaPerSecondM * dtS);
}

/**
 * Reused buffers: a step's transitions are consumed by the lattice before the next step's are
 * computed, and fresh arrays per step were a visible share of garbage collection.
 */
class Scratch {
  private readonly floats = new Map<string, Float64Array>();
  private ints = new Int32Array(64);

  take(name: string, n: number): Float64Array {
    let buffer = this.floats.get(name);
    if (!buffer || buffer.length < n) this.floats.set(name, (buffer = new Float64Array(Math.max(64, 2 * n))));
    return buffer.subarray(0, n);
  }

  targets(n: number): Int32Array {
    if (this.ints.length < n) this.ints = new Int32Array(2 * n);
    return this.ints;
  }
}

const scratch = new Scratch();
const ends = new Int32Array(2);

/**
 * Log transition probabilities prev × next (row-major): exponential on
 * |route − great circle| with scale β(Δt), without the shared −log β
 * constant; −Infinity where no route exists within the bound.
 *
 * Exact Viterbi with branch and bound: moves along one segment need no
 * search; then one bounded route query per distinct exit node, best-scoring
 * first, each reaching only as far as some of its candidates could still
 * beat the best score already found for a next candidate. Pairs skipped that
 * way stay −Infinity: they cannot be any next candidate's best predecessor.
 * When the fix's nearest road is not reached (nothing at all, or only roads
 * further from it), the search runs again as an unseen drive (routeBoundM).
 * Plain loops over typed arrays: this runs several times per GPS point. The
 * result is a shared buffer, valid until the next call.
 */
export function transitionLogProbs(
  ctx: MatchContext,
  prev: Step,
  next: Step,
  prevScores: number[],
  o: ResolvedMatchOptions,
  unseenDrive = false,
): Float64Array {
  const gc = greatCircleM(ctx, prev, next);
  const dtS = (next.t - prev.t) / 1000;
  const boundM = routeBoundM(gc, dtS, o, unseenDrive);
  const beta = betaM(dtS, o);
  const prevC = prev.candidates;
  const nextC = next.candidates;
  const nNext = nextC.length;
  const logProbs = scratch.take("logProbs", prevC.length * nNext).fill(-Infinity);
  // Best score through any predecessor found so far, per next candidate.
  const bestVia = scratch.take("bestVia", nNext).fill(-Infinity);
  const lattice = { logProbs, bestVia, prevScores, nNext, gc, beta };
  for (let i = 0; i < prevC.length; i++) {
    if (prevScores[i] === -Infinity) continue;
    for (let j = 0; j < nNext; j++) {
      const moveM = alongMoveM(prevC[i], nextC[j], o.backwardToleranceM);
      if (moveM >= 0) record(lattice, i, j, moveM);
    }
  }
  const reachM = scratch.take("reachM", nNext);
  const targets = scratch.targets(nNext);
  const nodeM = scratch.take("nodeM", nNext);
  const groups = exitGroupsBestFirst(prev, prevScores);
  for (let g = 0; g < groups.length; g++) {
    const members = groups[g];
    const maxCostM = searchReach(prev, next, members, prevScores, bestVia, gc, beta, boundM, reachM);
    if (maxCostM < 0) continue;
    let count = 0;
    for (let j = 0; j < nNext; j++) if (reachM[j] >= 0) targets[count++] = nextC[j].entryNode;
    ctx.routes.costsTo(prevC[members[0]].exitNode, targets, count, maxCostM, nodeM);
    recordGroup(ctx, lattice, prev, next, members, reachM, nodeM, o);
  }
  // The fix's nearest road not reached: after minutes unseen the vehicle may have driven further than the
  // straight line allows (the bound first: it is cheap, and no larger for all but gaps of minutes).
  if (!unseenDrive && routeBoundM(gc, dtS, o, true) > boundM && nearestUnreached(nextC, bestVia))
    return transitionLogProbs(ctx, prev, next, prevScores, o, true);
  return logProbs;
}

/**
 * Records the routed transitions of one exit-node group. A route that turns back costs `uTurnPenaltyM`:
 * in place at a's exit node onto a's own segment, or as the first or last edge of the routed path (back
 * along a's segment, or along b's segment past b and back); a shortest path never turns back in its
 * middle (that would be a cycle). Without charging the routed ones too, a waiting car's jittering fixes
 * were matched as spurs onto the segment behind it and back, for free. The path is looked at only for
 * pairs whose route is at least as long as the reverse edge and which could still be j's best.
 */
function recordGroup(
  ctx: MatchContext,
  lattice: TransitionRow,
  prev: Step,
  next: Step,
  members: number[],
  reachM: Float64Array,
  nodeM: Float64Array,
  o: ResolvedMatchOptions,
): void {
  const prevC = prev.candidates;
  const nextC = next.candidates;
  for (let j = 0, t = 0; j < nextC.length; j++) {
    if (reachM[j] < 0) continue;
    const routeM = nodeM[t++];
    if (routeM === Infinity) continue;
    const b = nextC[j];
    // Ends of the path from the group's exit node to b's entry node: 0 not looked up, 1 in `ends`, −1 none.
    let endsState = 0;
    for (let m = 0; m < members.length; m++) {
      const i = members[m];
      const a = prevC[i];
      if (alongMoveM(a, b, o.backwardToleranceM) >= 0) continue;
      const plainM = a.exitCostM + routeM + b.entryCostM;
      if (isUTurnAtNode(a, b)) {
        record(lattice, i, j, plainM + o.uTurnPenaltyM);
        continue;
      }
      const aBack = reverseEdgeOf(a);
      const bBack = reverseEdgeOf(b);
      // A route cheaper than an edge cannot contain it (a oneway's reverse edge costs ∞).
      if (routeM < ctx.edgeCostM[aBack] && routeM < ctx.edgeCostM[bBack]) {
        record(lattice, i, j, plainM);
        continue;
      }
      if (!canBeBest(lattice, i, j, plainM, o.uTurnPenaltyM)) continue;
      if (endsState === 0) endsState = ctx.routes.pathEnds(a.exitNode, b.entryNode, ends) ? 1 : -1;
      const turnsBack = endsState === 1 && (ends[0] === aBack || ends[1] === bBack);
      record(lattice, i, j, plainM + (turnsBack ? o.uTurnPenaltyM : 0));
    }
  }
}

/** Candidates this close to the fix's nearest one count as equally near (the two directions of a road). */
const NEAREST_TIE_M = 1;

/**
 * Whether no next candidate as near the fix as its nearest one got a finite score through any
 * predecessor: the fix most likely lies on a road the search did not reach (nothing reached at all is
 * one case; a far side street reached while the road under the fix was not is the other).
 */
function nearestUnreached(nextC: Candidate[], bestVia: Float64Array): boolean {
  let nearestM = Infinity;
  for (let j = 0; j < nextC.length; j++) nearestM = Math.min(nearestM, nextC[j].distanceM);
  for (let j = 0; j < nextC.length; j++)
    if (nextC[j].distanceM <= nearestM + NEAREST_TIE_M && bestVia[j] !== -Infinity) return false;
  return true;
}

/** Whether i → j with a route of `routeM` or `routeM + extraM` could beat j's best so far (ties kept). */
function canBeBest(row: TransitionRow, i: number, j: number, routeM: number, extraM: number): boolean {
  const offM = routeM > row.gc ? routeM - row.gc : Math.max(0, row.gc - routeM - extraM);
  return row.prevScores[i] - offM / row.beta >= row.bestVia[j];
}

/** The directed edge opposite to the candidate's direction of travel. */
function reverseEdgeOf(c: Candidate): number {
  return 2 * c.segIndex + (c.forward ? 1 : 0);
}

interface TransitionRow {
  logProbs: Float64Array;
  bestVia: Float64Array;
  prevScores: number[];
  nNext: number;
  gc: number;
  beta: number;
}

/** Stores the transition i → j of route length `routeM` and keeps j's best score through any predecessor. */
function record(row: TransitionRow, i: number, j: number, routeM: number): void {
  const lp = -Math.abs(routeM - row.gc) / row.beta;
  row.logProbs[i * row.nNext + j] = lp;
  const s = row.prevScores[i] + lp;
  if (s > row.bestVia[j]) row.bestVia[j] = s;
}

/** Live prev candidates grouped by exit node (one query serves a group), best group score first. */
function exitGroupsBestFirst(prev: Step, prevScores: number[]): number[][] {
  const groups: number[][] = [];
  const tops = doubleRow();
  for (let i = 0; i < prev.candidates.length; i++) {
    if (prevScores[i] === -Infinity) continue;
    const exitNode = prev.candidates[i].exitNode;
    let g = 0;
    while (g < groups.length && prev.candidates[groups[g][0]].exitNode !== exitNode) g++;
    if (g === groups.length) {
      groups.push([i]);
      tops.push(prevScores[i]);
    } else {
      groups[g].push(i);
      if (prevScores[i] > tops[g]) tops[g] = prevScores[i];
    }
  }
  // Insertion sort (a handful of groups), best top score first, then by first member: no closures.
  for (let g = 1; g < groups.length; g++) {
    const group = groups[g];
    const top = tops[g];
    let h = g - 1;
    for (; h >= 0 && (tops[h] < top || (tops[h] === top && groups[h][0] > group[0])); h--) {
      groups[h + 1] = groups[h];
      tops[h + 1] = tops[h];
    }
    groups[h + 1] = group;
    tops[h + 1] = top;
  }
  return groups;
}

/**
 * How far (node-to-node metres) a group's query must reach for each next
 * candidate (into `reachM`): a route from i longer than gc + β(s_i − bestVia_j)
 * cannot beat the best already found for j. Negative reach: j needs nothing
 * from here. Returns the largest reach, negative when no j needs a route.
 */
function searchReach(
  prev: Step,
  next: Step,
  members: number[],
  prevScores: number[],
  bestVia: Float64Array,
  gc: number,
  beta: number,
  boundM: number,
  reachM: Float64Array,
): number {
  let maxCostM = -Infinity;
  for (let j = 0; j < next.candidates.length; j++) {
    const b = next.candidates[j];
    let best = -Infinity;
    for (let m = 0; m < members.length; m++) {
      const i = members[m];
      const a = prev.candidates[i];
      const slackM = bestVia[j] === -Infinity ? Infinity : beta * (prevScores[i] - bestVia[j]);
      // The bound applies to the node-to-node part only, so long partial segments do not break the trip.
      const reach = Math.min(boundM, gc + slackM - a.exitCostM - b.entryCostM);
      if (reach > best) best = reach;
    }
    reachM[j] = best;
    if (best >= 0 && best > maxCostM) maxCostM = best;
  }
  return maxCostM;
}
