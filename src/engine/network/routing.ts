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

export interface DijkstraOptions {
  maxCost?: number;
  targets?: Iterable<number>;
  allowed?: (edge: number) => boolean;
}

/** One workspace per network for `dijkstra`: building one (queue, CSR heads) cost more than a short search. */
const sharedWorkspaces = new WeakMap<Network, DijkstraWorkspace>();

/**
 * Bounded one-to-many Dijkstra over the directed graph. Stops when every node
 * in `targets` is settled or the frontier passes `maxCost`. `allowed` filters
 * edges (for example by travel mode). Returns a tree of its own (copies of a
 * shared workspace's arrays, so it may be kept); callers that need no copy
 * should keep a `DijkstraWorkspace`.
 */
export function dijkstra(
  network: Network,
  source: number,
  weight: EdgeWeight,
  opts: DijkstraOptions = {},
): ShortestPathTree {
  let workspace = sharedWorkspaces.get(network);
  if (!workspace) sharedWorkspaces.set(network, (workspace = new DijkstraWorkspace(network)));
  const tree = workspace.run(source, weight, opts);
  return { cost: tree.cost.slice(), viaEdge: tree.viaEdge.slice() };
}

/**
 * Reusable Dijkstra state for one network: the node arrays are allocated once
 * and only the nodes a search touched are reset before the next one, so a
 * short search costs in proportion to what it explores, not to the network.
 * The workspace itself is the tree of the latest search (valid until the next).
 */
export class DijkstraWorkspace implements ShortestPathTree {
  readonly cost: Float64Array;
  readonly viaEdge: Int32Array;
  /** A node is settled when its stamp equals the current search's. */
  private readonly settledStamp: Uint32Array;
  private stamp = 0;
  private readonly touched: Int32Array;
  private touchedCount = 0;
  private readonly queue: FlatQueue<number>;
  private readonly pendingTarget: Uint32Array;
  /** Targets the stepwise search has still to settle (`aimAt`); −1: none, `expand` runs to its bound. */
  private pending = -1;
  /** Head node of each CSR out-edge slot, so relaxing an edge reads one array in order. */
  private readonly outTo: Int32Array;
  /** Per-edge weight arrays re-laid in CSR slot order, built on first use of each array. */
  private readonly csrWeights = new WeakMap<Float64Array, Float64Array>();

  constructor(private readonly network: Network) {
    const n = network.graph.nodeCount;
    this.cost = new Float64Array(n).fill(Infinity);
    this.viaEdge = new Int32Array(n).fill(-1);
    this.settledStamp = new Uint32Array(n);
    this.pendingTarget = new Uint32Array(n);
    this.touched = new Int32Array(n);
    const { outEdges, edgeTo } = network.graph;
    this.outTo = Int32Array.from(outEdges, (e) => edgeTo[e]);
    // Every push follows a strict improvement through one edge, so a search pushes at most once per
    // edge: a fixed typed-array queue of that size never overflows and is faster than a growing one.
    this.queue = new FlatQueue<number>(network.graph.outEdges.length + 1, Float64Array, Int32Array);
  }

  /**
   * Runs a search with edge weights as a function or as a per-edge array
   * (Infinity = closed). An array is treated as immutable: its CSR-ordered
   * copy is cached per workspace.
   */
  run(source: number, weight: EdgeWeight | Float64Array, opts: DijkstraOptions = {}): this {
    this.reset();
    const { outStart, outEdges } = this.network.graph;
    const { cost, viaEdge, settledStamp, pendingTarget, queue, touched, outTo } = this;
    const stamp = this.stamp;
    const maxCost = opts.maxCost ?? Infinity;
    let pending = 0;
    for (const t of opts.targets ?? []) {
      if (pendingTarget[t] !== stamp) pending++;
      pendingTarget[t] = stamp;
    }
    const stopOnTargets = pending > 0;
    const allowed = opts.allowed;
    // Array weights are read inline in slot order: a closure call per edge is a measurable share of matching time.
    const slotWeights = typeof weight === "function" ? null : this.csrWeightsOf(weight);
    this.touch(source, 0);
    queue.push(source, 0);
    while (queue.length > 0) {
      const node = queue.pop()!;
      if (settledStamp[node] === stamp) continue;
      settledStamp[node] = stamp;
      if (stopOnTargets && pendingTarget[node] === stamp && --pending === 0) break;
      const here = cost[node];
      for (let k = outStart[node], end = outStart[node + 1]; k < end; k++) {
        if (allowed && !allowed(outEdges[k])) continue;
        const c = here + (slotWeights ? slotWeights[k] : (weight as EdgeWeight)(outEdges[k]));
        if (!(c <= maxCost)) continue;
        const next = outTo[k];
        if (c < cost[next]) {
          if (cost[next] === Infinity) touched[this.touchedCount++] = next;
          cost[next] = c;
          viaEdge[next] = outEdges[k];
          queue.push(next, c);
        }
      }
    }
    queue.clear();
    return this;
  }

  /**
   * A search in steps, for route balls: `begin`, `place` nodes whose exact cost is known, `openBorder`,
   * then `expand`. One kind of weights and no targets or filter: the matcher runs it thousands of times
   * from a cold start, and a small monomorphic loop is compiled once (the general `run` is also used
   * by the simulator with function weights, and recompiled each time it meets the other kind).
   */
  begin(): void {
    this.reset();
  }

  /**
   * Makes `expand` stop once every one of `targets[0…count − 1]` is settled, as `run` does with
   * targets. Route balls' live searches use this instead of `run`: other callers (the simulator, with
   * function weights and other options) shape `run`'s compiled code, and the matcher's first live
   * search threw that code away mid cold pass.
   */
  aimAt(targets: Int32Array, count: number): void {
    const { pendingTarget, stamp } = this;
    let pending = 0;
    for (let j = 0; j < count; j++) {
      const t = targets[j];
      if (pendingTarget[t] !== stamp) pending++;
      pendingTarget[t] = stamp;
    }
    this.pending = pending > 0 ? pending : -1;
  }

  /** Puts `node` in the tree at `cost`, reached by `viaEdge` (−1 for the source); not expanded yet. */
  place(node: number, cost: number, viaEdge: number): void {
    this.touch(node, cost);
    this.viaEdge[node] = viaEdge;
  }

  /**
   * Queues every placed node with an edge to a node not placed. Placed nodes hold exact costs (a
   * bounded search settled them), so only these border nodes can lead anywhere new: a ball grows from
   * its border instead of being searched again from the source.
   */
  openBorder(weights: Float64Array): void {
    const { outStart } = this.network.graph;
    const slotWeights = this.csrWeightsOf(weights);
    const { cost, outTo, touched, queue } = this;
    for (let i = 0, n = this.touchedCount; i < n; i++) {
      const node = touched[i];
      for (let k = outStart[node], end = outStart[node + 1]; k < end; k++) {
        if (slotWeights[k] !== Infinity && cost[outTo[k]] === Infinity) {
          queue.push(node, cost[node]);
          break;
        }
      }
    }
  }

  /**
   * Settles queued nodes in cost order, reaching every node within `maxCost` of the placed ones (or
   * until the targets of `aimAt` are settled).
   */
  expand(weights: Float64Array, maxCost: number): this {
    const { outStart, outEdges } = this.network.graph;
    const slotWeights = this.csrWeightsOf(weights);
    const { cost, viaEdge, settledStamp, pendingTarget, queue, touched, outTo } = this;
    const stamp = this.stamp;
    let pending = this.pending;
    while (queue.length > 0) {
      const node = queue.pop()!;
      if (settledStamp[node] === stamp) continue;
      settledStamp[node] = stamp;
      // Counted on every node, not only on targets: a branch first taken mid pass (the first live
      // search after the balls were precomputed) threw the compiled loop away.
      pending -= pendingTarget[node] === stamp ? 1 : 0;
      if (pending === 0) break;
      const here = cost[node];
      for (let k = outStart[node], end = outStart[node + 1]; k < end; k++) {
        const c = here + slotWeights[k];
        if (!(c <= maxCost)) continue;
        const next = outTo[k];
        if (c < cost[next]) {
          if (cost[next] === Infinity) touched[this.touchedCount++] = next;
          cost[next] = c;
          viaEdge[next] = outEdges[k];
          queue.push(next, c);
        }
      }
    }
    queue.clear();
    return this;
  }

  /** Nodes the latest search reached (finite cost), in the order first reached; valid until the next search. */
  reachedNodes(): Int32Array {
    return this.touched.subarray(0, this.touchedCount);
  }

  /**
   * Lays out `weights` in CSR slot order now, for a workspace that will search with them: the search
   * loops then never take their first-use branch, which compiled code that had not seen it was thrown
   * away for (a matcher's second travel mode met it mid pass).
   */
  prepareWeights(weights: Float64Array): void {
    if (!this.csrWeights.has(weights)) this.csrWeights.set(weights, this.inSlotOrder(weights));
  }

  private csrWeightsOf(weights: Float64Array): Float64Array {
    let slots = this.csrWeights.get(weights);
    if (!slots) this.csrWeights.set(weights, (slots = this.inSlotOrder(weights)));
    return slots;
  }

  private inSlotOrder(weights: Float64Array): Float64Array {
    return Float64Array.from(this.network.graph.outEdges, (e) => weights[e]);
  }

  private touch(node: number, c: number): void {
    this.cost[node] = c;
    this.touched[this.touchedCount++] = node;
  }

  /** Forgets the previous search: resets the touched nodes and moves to a fresh stamp. */
  private reset(): void {
    for (let i = 0; i < this.touchedCount; i++) {
      const n = this.touched[i];
      this.cost[n] = Infinity;
      this.viaEdge[n] = -1;
    }
    this.touchedCount = 0;
    this.pending = -1;
    if (++this.stamp === 0xffffffff) {
      this.settledStamp.fill(0);
      this.pendingTarget.fill(0);
      this.stamp = 1;
    }
  }
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
