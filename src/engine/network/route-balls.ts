import type { Network } from "./network.js";
import type { DijkstraWorkspace } from "./routing.js";

/**
 * Every node within `radius` of one source with its exact shortest-path cost
 * and the edge the tree reaches it by, in an open-addressing hash table
 * (at most half full, so a lookup takes one or two
 * probes: a binary search was a tenth of all matching time).
 */
interface Ball {
  radius: number;
  /** Slots − 1 (a power of two minus one). */
  mask: number;
  /** Slot k holds node `table[2k]` (−1 = empty) and its cost `table[2k + 1]`: one cache line per probe. */
  table: Float64Array;
  viaEdge: Int32Array;
}

export interface RouteBallOptions {
  /** Balls are grown to at least this radius (cost units): one search then serves many later queries. */
  minRadius: number;
  /** Queries beyond this radius run a live search and are not kept (a long leg is rare and its ball large). */
  maxRadius: number;
  /** Hash slots (16 bytes each, 2–4 per node) kept over all balls; past it the cache starts afresh (memory stays bounded). */
  maxEntries: number;
}

/**
 * Shortest-path costs from a source node, answered from a cached ball of
 * everything within some radius of it (the idea of FMM's upper-bounded
 * origin-destination table, filled lazily): map matching routes from the
 * same junctions again and again, trip after trip, and a lookup is far
 * cheaper than a search. Answers equal a bounded Dijkstra's: the exact cost
 * when it is within the query's bound, Infinity otherwise.
 */
export class RouteBalls {
  private readonly balls = new Map<number, Ball>();
  private entries = 0;
  /** Hits and searches, for benchmarks. */
  readonly stats = { hits: 0, grown: 0, live: 0, cleared: 0 };

  constructor(
    private readonly network: Network,
    private readonly workspace: DijkstraWorkspace,
    private readonly weights: Float64Array,
    private readonly opts: RouteBallOptions,
  ) {}

  /** Forgets every ball (their memory goes with them). */
  clear(): void {
    this.balls.clear();
    this.entries = 0;
  }

  /**
   * Fills `out[j]` with the cost from `source` to `targets[j]` when it is at
   * most `maxCost`, else Infinity.
   */
  costsTo(source: number, targets: Int32Array, count: number, maxCost: number, out: Float64Array): void {
    const ball = this.balls.get(source);
    // One lookup per target; a target outside a ball smaller than the bound needs a larger ball.
    if (ball && costsInBall(ball, targets, count, maxCost, out)) {
      this.stats.hits++;
      return;
    }
    if (maxCost > this.opts.maxRadius) {
      this.stats.live++;
      const tree = this.workspace.run(source, this.weights, { maxCost, targets: targets.subarray(0, count) });
      for (let j = 0; j < count; j++) out[j] = tree.cost[targets[j]];
      return;
    }
    this.stats.grown++;
    const radius = Math.max(maxCost, this.opts.minRadius, ball ? 2 * ball.radius : 0);
    costsInBall(this.grow(source, Math.min(radius, this.opts.maxRadius), ball), targets, count, maxCost, out);
  }

  /** Edges of a shortest path from `source` to `target` in travel order (no bound); null when unreachable. */
  pathTo(source: number, target: number): number[] | null {
    const ball = this.balls.get(source);
    if (ball && costIn(ball, target) !== Infinity) {
      this.stats.hits++;
      return edgesTo(this.network, ball, target);
    }
    this.stats.live++;
    const tree = this.workspace.run(source, this.weights, { targets: [target] });
    if (tree.cost[target] === Infinity) return null;
    const edges: number[] = [];
    for (let n = target; tree.viaEdge[n] >= 0; n = this.network.graph.edgeFrom[tree.viaEdge[n]]) {
      edges.push(tree.viaEdge[n]);
    }
    return edges.reverse();
  }

  /**
   * First and last edge of a shortest path from `source` to `target` into `out[0]` and `out[1]`;
   * false when the path has no edge or there is none. Walks the cached tree without allocating (the
   * matcher asks this for many candidate pairs to see whether a route turns back).
   */
  pathEnds(source: number, target: number, out: Int32Array): boolean {
    const ball = this.balls.get(source);
    if (!ball || costIn(ball, target) === Infinity) {
      const edges = this.pathTo(source, target);
      if (!edges || edges.length === 0) return false;
      out[0] = edges[0];
      out[1] = edges[edges.length - 1];
      return true;
    }
    let first = -1;
    let last = -1;
    for (let n = target; ;) {
      const via = ball.viaEdge[indexIn(ball, n)];
      if (via < 0) break;
      if (last < 0) last = via;
      first = via;
      n = this.network.graph.edgeFrom[via];
    }
    out[0] = first;
    out[1] = last;
    return first >= 0;
  }

  private grow(source: number, radius: number, old: Ball | undefined): Ball {
    const tree = this.workspace.run(source, this.weights, { maxCost: radius });
    const reached = this.workspace.reachedNodes();
    const ball = emptyBall(radius, reached.length);
    for (const node of reached) {
      const k = freeSlot(ball, node);
      ball.table[2 * k] = node;
      ball.table[2 * k + 1] = tree.cost[node];
      ball.viaEdge[k] = tree.viaEdge[node];
    }
    const n = ball.viaEdge.length;
    if (old) this.entries -= old.viaEdge.length;
    if (this.entries + n > this.opts.maxEntries) {
      this.balls.clear();
      this.stats.cleared++;
      this.entries = 0;
    }
    this.balls.set(source, ball);
    this.entries += n;
    return ball;
  }
}

function emptyBall(radius: number, count: number): Ball {
  let slots = 8;
  while (slots < 2 * count) slots *= 2;
  return {
    radius,
    mask: slots - 1,
    table: new Float64Array(2 * slots).fill(-1),
    viaEdge: new Int32Array(slots),
  };
}

/** Fibonacci hashing of a node id into the table, linear probing. */
function firstSlot(ball: Ball, node: number): number {
  return Math.imul(node, 0x9e3779b1) & ball.mask;
}

function freeSlot(ball: Ball, node: number): number {
  let k = firstSlot(ball, node);
  while (ball.table[2 * k] !== -1) k = (k + 1) & ball.mask;
  return k;
}

function indexIn(ball: Ball, node: number): number {
  const table = ball.table;
  for (let k = firstSlot(ball, node); ; k = (k + 1) & ball.mask) {
    const v = table[2 * k];
    if (v === node) return k;
    if (v === -1) return -1;
  }
}

function costIn(ball: Ball, node: number): number {
  const k = indexIn(ball, node);
  return k < 0 ? Infinity : ball.table[2 * k + 1];
}

/**
 * Costs of the targets within the bound from the ball (Infinity beyond it);
 * false when a target is outside a ball whose radius is below the bound.
 */
function costsInBall(
  ball: Ball,
  targets: Int32Array,
  count: number,
  maxCost: number,
  out: Float64Array,
): boolean {
  for (let j = 0; j < count; j++) {
    const k = indexIn(ball, targets[j]);
    if (k < 0) {
      if (ball.radius < maxCost) return false;
      out[j] = Infinity;
    } else {
      const cost = ball.table[2 * k + 1];
      out[j] = cost <= maxCost ? cost : Infinity;
    }
  }
  return true;
}

function edgesTo(network: Network, ball: Ball, target: number): number[] {
  const edges: number[] = [];
  for (let n = target; ;) {
    const via = ball.viaEdge[indexIn(ball, n)];
    if (via < 0) break;
    edges.push(via);
    n = network.graph.edgeFrom[via];
  }
  return edges.reverse();
}
