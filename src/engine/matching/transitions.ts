import type { MatchContext } from "./context.js";
import { isForwardMoveOnSegment, isUTurnAtNode, type Step } from "./candidates.js";
import type { ResolvedMatchOptions } from "./options.js";

/** Straight-line metres between the two GPS points (not the snapped ones), as Newson & Krumm compare. */
export function greatCircleM(ctx: MatchContext, a: Step, b: Step): number {
  return ctx.network.ruler.distance(a.position, b.position);
}

/**
 * How far a route between two steps may be searched: a multiple of the
 * straight line, capped by what the vehicle could drive in Δt. Fixes without
 * a usable time difference (Δt ≤ 0, e.g. a drawn track) get no speed cap.
 */
export function routeBoundM(gcM: number, dtS: number, o: ResolvedMatchOptions): number {
  const byShape = Math.max(o.minRouteBoundM, o.routeBoundFactor * gcM + o.routeBoundSlackM);
  if (dtS <= 0) return byShape;
  return Math.min(byShape, dtS * o.maxSpeedMps + 2 * o.searchRadiusM);
}

/** β grows with the sampling interval: longer gaps leave more room for detours the points do not show. */
export function betaM(dtS: number, o: ResolvedMatchOptions): number {
  return Math.max(o.betaMinM, o.betaPerSecondM * dtS);
}

/**
 * Route metres from every live candidate of `prev` to every candidate of
 * `next` (row-major prev × next, Infinity when unreachable within the bound).
 * One bounded Dijkstra per distinct exit node, stopping once all entry nodes
 * of `next` are settled. A U-turn onto the segment just travelled is charged
 * `uTurnPenaltyM`.
 */
export function routeDistances(
  ctx: MatchContext,
  prev: Step,
  next: Step,
  prevAlive: Float64Array,
  boundM: number,
  o: ResolvedMatchOptions,
): Float64Array {
  const nPrev = prev.candidates.length;
  const nNext = next.candidates.length;
  const out = new Float64Array(nPrev * nNext).fill(Infinity);
  const targets = [...new Set(next.candidates.map((c) => c.entryNode))];
  const nodeDistsByExit = new Map<number, Float64Array>();
  for (let i = 0; i < nPrev; i++) {
    if (prevAlive[i] === -Infinity) continue;
    const a = prev.candidates[i];
    let nodeDists = nodeDistsByExit.get(a.exitNode);
    if (!nodeDists) {
      nodeDists = nodeDistancesFrom(ctx, a.exitNode, next, targets, boundM);
      nodeDistsByExit.set(a.exitNode, nodeDists);
    }
    for (let j = 0; j < nNext; j++) {
      const b = next.candidates[j];
      let d: number;
      if (isForwardMoveOnSegment(a, b)) d = Math.abs(b.alongM - a.alongM);
      else {
        d = a.exitCostM + nodeDists[j] + b.entryCostM;
        if (isUTurnAtNode(a, b)) d += o.uTurnPenaltyM;
      }
      out[i * nNext + j] = d;
    }
  }
  return out;
}

/** Network metres from `source` to each next candidate's entry node. */
function nodeDistancesFrom(
  ctx: MatchContext,
  source: number,
  next: Step,
  targets: number[],
  boundM: number,
): Float64Array {
  const tree = ctx.workspace.run(source, ctx.edgeCostM, { maxCost: boundM, targets });
  return Float64Array.from(next.candidates, (c) => tree.cost[c.entryNode]);
}

/**
 * Log transition probabilities prev × next: exponential on |route − great
 * circle| with scale β(Δt), without the shared −log β constant.
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
  const routes = routeDistances(ctx, prev, next, prevScores, routeBoundM(gc, dtS, o), o);
  const beta = betaM(dtS, o);
  const logProbs = new Float64Array(routes.length);
  for (let k = 0; k < routes.length; k++) {
    logProbs[k] = routes[k] === Infinity ? -Infinity : -Math.abs(routes[k] - gc) / beta;
  }
  return logProbs;
}
