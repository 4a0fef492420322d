import FlatQueue from "flatqueue";
import type { Network } from "./network.js";

/** Cost of travelling one directed edge (edge = segment index × 2 + direction). */
export type EdgeWeight = (edge: number) => number;

/** Edge weight in metres: the segment's length. */
export function lengthWeight(network: Network): EdgeWeight {
  return (edge) => network.segments[edge >> 1].lengthM;
}

/** Edge weight in seconds at the segment's speed, optionally scaled per segment (e.g. road preference). */
export function timeWeight(network: Network, factor?: (segmentIndex: number) => number): EdgeWeight {
  return (edge) => {
    const s = network.segments[edge >> 1];
    const seconds = s.lengthM / (s.speedKph / 3.6);
    return factor ? seconds * factor(edge >> 1) : seconds;
  };
}

export interface ShortestPathTree {
  /** Cost from the source to each node (Infinity where not reached within the bound). */
  cost: Float64Array;
  /** Edge used to reach each node, -1 for the source and unreached nodes. */
  viaEdge: Int32Array;
}

/**
 * Bounded one-to-many Dijkstra over the directed graph. Stops when every node
 * in `targets` is settled or the frontier passes `maxCost`. `allowed` filters
 * edges (for example by travel mode).
 */
export function dijkstra(
  network: Network,
  source: number,
  weight: EdgeWeight,
  opts: { maxCost?: number; targets?: Iterable<number>; allowed?: (edge: number) => boolean } = {},
): ShortestPathTree {
  const { nodeCount, outStart, outEdges, edgeTo } = network.graph;
  const maxCost = opts.maxCost ?? Infinity;
  const cost = new Float64Array(nodeCount).fill(Infinity);
  const viaEdge = new Int32Array(nodeCount).fill(-1);
  const settled = new Uint8Array(nodeCount);
  const pending = new Set(opts.targets ?? []);
  const stopOnTargets = pending.size > 0;
  const queue = new FlatQueue<number>();
  cost[source] = 0;
  queue.push(source, 0);
  while (queue.length > 0) {
    const node = queue.pop()!;
    if (settled[node]) continue;
    settled[node] = 1;
    if (stopOnTargets && pending.delete(node) && pending.size === 0) break;
    const here = cost[node];
    for (let k = outStart[node]; k < outStart[node + 1]; k++) {
      const edge = outEdges[k];
      if (opts.allowed && !opts.allowed(edge)) continue;
      const next = edgeTo[edge];
      const c = here + weight(edge);
      if (c < cost[next] && c <= maxCost) {
        cost[next] = c;
        viaEdge[next] = edge;
        queue.push(next, c);
      }
    }
  }
  return { cost, viaEdge };
}

/** Edges from the tree's source to `target`, in travel order; null when unreached. */
export function pathTo(network: Network, tree: ShortestPathTree, target: number): number[] | null {
  if (tree.cost[target] === Infinity) return null;
  const edges: number[] = [];
  for (let n = target; tree.viaEdge[n] >= 0; n = network.graph.edgeFrom[tree.viaEdge[n]]) {
    edges.push(tree.viaEdge[n]);
  }
  return edges.reverse();
}
