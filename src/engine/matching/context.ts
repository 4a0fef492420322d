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

const contexts = new WeakMap<Network, Map<AccessMode, MatchContext>>();

export function matchContextOf(network: Network, mode: AccessMode): MatchContext {
  let byMode = contexts.get(network);
  if (!byMode) contexts.set(network, (byMode = new Map()));
  let ctx = byMode.get(mode);
  if (!ctx) byMode.set(mode, (ctx = buildContext(network, mode)));
  return ctx;
}

function buildContext(network: Network, mode: AccessMode): MatchContext {
  const edgeCostM = new Float64Array(network.segments.length * 2);
  network.segments.forEach((s, i) => {
    const cost = network.allows(s, mode) ? s.lengthM : Infinity;
    edgeCostM[2 * i] = cost;
    edgeCostM[2 * i + 1] = s.oneway ? Infinity : cost;
  });
  return { network, mode, edgeCostM, workspace: new DijkstraWorkspace(network) };
}
