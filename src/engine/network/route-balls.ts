import type { Network } from "./network.js";
import type { DijkstraWorkspace } from "./routing.js";

/**
 * Every node within `radius` of one source: node ids ascending, with the
 * exact shortest-path cost and the edge the tree reaches each node by.
 */
interface Ball {
  radius: number;
  nodes: Int32Array;
  cost: Float64Array;
  viaEdge: Int32Array;
}

export interface RouteBallOptions {
  /** Balls are grown to at least this radius (cost units): one search then serves many later queries. */
  minRadius: number;
  /** Queries beyond this radius run a live search and are not kept (a long leg is rare and its ball large). */
  maxRadius: number;
  /** Node entries kept over all balls; past it the cache starts afresh (memory stays bounded). */
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
  readonly stats = { hits: 0, grown: 0, live: 0 };

  constructor(
    private readonly network: Network,
    private readonly workspace: DijkstraWorkspace,
    private readonly weights: Float64Array,
    private readonly opts: RouteBallOptions,
  ) {}

  /**
   * Fills `out[j]` with the cost from `source` to `targets[j]` when it is at
   * most `maxCost`, else Infinity.
   */
  costsTo(source: number, targets: Int32Array, count: number, maxCost: number, out: Float64Array): void {
    const ball = this.ballFor(source, targets, count, maxCost);
    if (ball) {
      for (let j = 0; j < count; j++) {
        const c = costIn(ball, targets[j]);
        out[j] = c <= maxCost ? c : Infinity;
      }
      return;
    }
    this.stats.live++;
    const tree = this.workspace.run(source, this.weights, { maxCost, targets: targets.subarray(0, count) });
    for (let j = 0; j < count; j++) out[j] = tree.cost[targets[j]];
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

  /** A ball answering the query exactly, grown if needed; null when the query is beyond `maxRadius`. */
  private ballFor(source: number, targets: Int32Array, count: number, maxCost: number): Ball | null {
    const ball = this.balls.get(source);
    if (ball && (ball.radius >= maxCost || allInside(ball, targets, count))) {
      this.stats.hits++;
      return ball;
    }
    const radius = Math.max(maxCost, this.opts.minRadius, ball ? 2 * ball.radius : 0);
    if (maxCost > this.opts.maxRadius) return null;
    this.stats.grown++;
    return this.grow(source, Math.min(radius, this.opts.maxRadius), ball);
  }

  private grow(source: number, radius: number, old: Ball | undefined): Ball {
    const tree = this.workspace.run(source, this.weights, { maxCost: radius });
    const reached = this.workspace.reachedNodes().slice().sort();
    const n = reached.length;
    const ball: Ball = {
      radius,
      nodes: reached,
      cost: new Float64Array(n),
      viaEdge: new Int32Array(n),
    };
    for (let k = 0; k < n; k++) {
      ball.cost[k] = tree.cost[reached[k]];
      ball.viaEdge[k] = tree.viaEdge[reached[k]];
    }
    if (old) this.entries -= old.nodes.length;
    if (this.entries + n > this.opts.maxEntries) {
      this.balls.clear();
      this.entries = 0;
    }
    this.balls.set(source, ball);
    this.entries += n;
    return ball;
  }
}

function indexIn(ball: Ball, node: number): number {
  const nodes = ball.nodes;
  let lo = 0;
  let hi = nodes.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = nodes[mid];
    if (v < node) lo = mid + 1;
    else if (v > node) hi = mid - 1;
    else return mid;
  }
  return -1;
}

function costIn(ball: Ball, node: number): number {
  const k = indexIn(ball, node);
  return k < 0 ? Infinity : ball.cost[k];
}

function allInside(ball: Ball, targets: Int32Array, count: number): boolean {
  for (let j = 0; j < count; j++) if (indexIn(ball, targets[j]) < 0) return false;
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
