import type { AccessMode, Network } from "../network/network.js";
import { DijkstraWorkspace } from "../network/routing.js";

/**
 * What matching needs per network and travel mode, built once and reused by
 * every trip: edge lengths with closed edges at Infinity (so routing needs no
 * filter callback) and one Dijkstra workspace (matching is synchronous, so
 * trips never interleave on it).
 */
export interface MatchContext {
  network: Network;
  mode: AccessMode;
  edgeCostM: Float64Array;
  workspace: DijkstraWorkspace;
}

const contexts = new WeakMap<Network, Map<string, MatchContext>>();

export function matchContextOf(network: Network, mode: AccessMode, slowRoadPenalty = 0): MatchContext {
  let byMode = contexts.get(network);
  if (!byMode) contexts.set(network, (byMode = new Map()));
  const key = `${mode}:${slowRoadPenalty}`;
  let ctx = byMode.get(key);
  if (!ctx) byMode.set(key, (ctx = buildContext(network, mode, slowRoadPenalty)));
  return ctx;
}

/** Speed at and above which a road carries no prior penalty (an urban main road's limit). */
const PRIOR_FULL_SPEED_KPH = 50;

function buildContext(network: Network, mode: AccessMode, slowRoadPenalty: number): MatchContext {
  const edgeCostM = new Float64Array(network.segments.length * 2);
  network.segments.forEach((s, i) => {
    // Road-speed prior (cars only): a route through slow side streets is taken as that much longer, so
    // among routes that fit the fixes about equally the one along the main road wins.
    const slowness =
      mode === "car" ? Math.max(0, PRIOR_FULL_SPEED_KPH - s.speedKph) / PRIOR_FULL_SPEED_KPH : 0;
    const cost = network.allows(s, mode) ? s.lengthM * (1 + slowRoadPenalty * slowness) : Infinity;
    edgeCostM[2 * i] = cost;
    edgeCostM[2 * i + 1] = s.oneway ? Infinity : cost;
  });
  return { network, mode, edgeCostM, workspace: new DijkstraWorkspace(network) };
}
