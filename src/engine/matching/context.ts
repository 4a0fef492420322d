import type { AccessMode, Network } from "../network/network.js";
import { RouteBalls } from "../network/route-balls.js";
import { DijkstraWorkspace } from "../network/routing.js";

/**
 * What matching needs per network and travel mode, built once and reused by
 * every trip: edge lengths with closed edges at Infinity (so routing needs no
 * filter callback), one Dijkstra workspace (matching is synchronous, so
 * trips never interleave on it) and the cached route balls built on it.
 */
export interface MatchContext {
  network: Network;
  mode: AccessMode;
  edgeCostM: Float64Array;
  workspace: DijkstraWorkspace;
  routes: RouteBalls;
}

/**
 * Route balls: a first search from a node covers 1 km (most transitions at 30 s sampling need less,
 * so later ones are lookups); legs beyond 4 km are searched live. 2 M entries ≈ 32 MB per context.
 */
const ROUTE_BALLS = { minRadius: 1000, maxRadius: 4000, maxEntries: 2_000_000 };

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
  const workspace = new DijkstraWorkspace(network);
  const routes = new RouteBalls(network, workspace, edgeCostM, ROUTE_BALLS);
  return { network, mode, edgeCostM, workspace, routes };
}
