import type { MatchContext } from "./context.js";
import { alongMoveM, isUTurnAtNode, type Step } from "./candidates.js";
import type { ResolvedMatchOptions } from "./options.js";

/** Straight-line metres between the two GPS points (not the snapped ones), as Newson & Krumm compare. */
export function greatCircleM(ctx: MatchContext, a: Step, b: Step): number {
  return ctx.network.ruler.distance(a.position, b.position);
}

/**
 * How far a route between two steps may be searched: a multiple of the
 * straight line, capped by what the vehicle could drive in Δt (fixes without
 * a usable time difference, e.g. a drawn track, get no speed cap) and by the
 * detour the transition model still deems possible: `maxDetourBetas` × β
 * beyond the straight line has probability e^-maxDetourBetas.
 */
export function routeBoundM(gcM: number, dtS: number, o: ResolvedMatchOptions): number {
  const byShape = Math.max(o.minRouteBoundM, o.routeBoundFactor * gcM + o.routeBoundSlackM);
  const byModel = gcM + o.maxDetourBetas * betaM(dtS, o);
  if (dtS <= 0) return Math.min(byShape, byModel);
  return Math.min(byShape, byModel, dtS * o.maxSpeedMps + 2 * o.searchRadiusM);
}

/** β grows with the sampling interval: longer gaps leave more room for detours the points do not show. */
export function betaM(dtS: number, o: ResolvedMatchOptions): number {
  return Math.max(o.betaMinM, o.betaPerSecondM * dtS);
}

/**
 * Log transition probabilities prev × next (row-major): exponential on
 * |route − great circle| with scale β(Δt), without the shared −log β
 * constant; −Infinity where no route exists within the bound.
 *
 * Exact Viterbi with branch and bound: moves along one segment need no
 * search; then one bounded Dijkstra per distinct exit node, best-scoring
 * first, each searching only as far as some of its candidates could still
 * beat the best score already found for a next candidate. Pairs skipped that
 * way stay −Infinity: they cannot be any next candidate's best predecessor.
 */
export function transitionLogProbs(
  ctx: MatchContext,
  prev: Step,
  next: Step,
  prevScores: Float64Array,
  o: ResolvedMatchOptions,
): Float64Array {
  const gc = greatCircleM(ctx, prev, next);
  const dtS = (next.t - prev.t) / 1000;
  const boundM = routeBoundM(gc, dtS, o);
  const beta = betaM(dtS, o);
  const nNext = next.candidates.length;
  const logProbs = new Float64Array(prev.candidates.length * nNext).fill(-Infinity);
  // Best score through any predecessor found so far, per next candidate.
  const bestVia = new Float64Array(nNext).fill(-Infinity);
  const record = (i: number, j: number, routeM: number) => {
    const lp = -Math.abs(routeM - gc) / beta;
    logProbs[i * nNext + j] = lp;
    if (prevScores[i] + lp > bestVia[j]) bestVia[j] = prevScores[i] + lp;
  };
  prev.candidates.forEach((a, i) => {
    if (prevScores[i] === -Infinity) return;
    next.candidates.forEach((b, j) => {
      const moveM = alongMoveM(a, b, o.backwardToleranceM);
      if (moveM >= 0) record(i, j, moveM);
    });
  });
  for (const members of exitGroupsBestFirst(prev, prevScores)) {
    const exitNode = prev.candidates[members[0]].exitNode;
    const { reachM, targets, maxCostM } = searchReach(
      prev,
      next,
      members,
      prevScores,
      bestVia,
      gc,
      beta,
      boundM,
    );
    if (targets.length === 0) continue;
    const tree = ctx.workspace.run(exitNode, ctx.edgeCostM, { maxCost: maxCostM, targets });
    for (const i of members) {
      const a = prev.candidates[i];
      next.candidates.forEach((b, j) => {
        if (reachM[j] < 0 || alongMoveM(a, b, o.backwardToleranceM) >= 0) return;
        const nodeM = tree.cost[b.entryNode];
        if (nodeM === Infinity) return;
        record(i, j, a.exitCostM + nodeM + b.entryCostM + (isUTurnAtNode(a, b) ? o.uTurnPenaltyM : 0));
      });
    }
  }
  return logProbs;
}

/** Live prev candidates grouped by exit node (one search serves a group), best group score first. */
function exitGroupsBestFirst(prev: Step, prevScores: Float64Array): number[][] {
  const groups = new Map<number, number[]>();
  prev.candidates.forEach((a, i) => {
    if (prevScores[i] === -Infinity) return;
    const members = groups.get(a.exitNode);
    if (members) members.push(i);
    else groups.set(a.exitNode, [i]);
  });
  const top = (members: number[]) => Math.max(...members.map((i) => prevScores[i]));
  return [...groups.values()].sort((x, y) => top(y) - top(x) || x[0] - y[0]);
}

/**
 * How far (node-to-node metres) a group's search must go for each next
 * candidate: a route from i longer than gc + β(s_i − bestVia_j) cannot beat
 * the best already found for j. Negative reach: j needs no search from here.
 */
function searchReach(
  prev: Step,
  next: Step,
  members: number[],
  prevScores: Float64Array,
  bestVia: Float64Array,
  gc: number,
  beta: number,
  boundM: number,
): { reachM: Float64Array; targets: number[]; maxCostM: number } {
  const reachM = new Float64Array(next.candidates.length).fill(-Infinity);
  const targets: number[] = [];
  let maxCostM = 0;
  next.candidates.forEach((b, j) => {
    for (const i of members) {
      const a = prev.candidates[i];
      const slackM = bestVia[j] === -Infinity ? Infinity : beta * (prevScores[i] - bestVia[j]);
      // The bound applies to the node-to-node part only, so long partial segments do not break the trip.
      const reach = Math.min(boundM, gc + slackM - a.exitCostM - b.entryCostM);
      if (reach > reachM[j]) reachM[j] = reach;
    }
    if (reachM[j] >= 0) {
      targets.push(b.entryNode);
      maxCostM = Math.max(maxCostM, reachM[j]);
    }
  });
  return { reachM, targets, maxCostM };
}
