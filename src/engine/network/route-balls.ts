import type { Network } from "./network.js";
import type { DijkstraWorkspace } from "./routing.js";

/**
 * Every node within `radius` of one source with its exact shortest-path cost
 * and the edge the tree reaches it by, in an open-addressing hash table
 * (at most half full, so a lookup takes one or two
 * probes: a binary search was a tenth of all matching time). The table is a
 * run of slots in a shared arena: a typed array per ball cost a fifth of a cold
 * matching pass in allocation and filling alone.
 */
interface Ball {
  /** Hash slots: a power of two or 5/8, 6/8 or 7/8 of one (see `slotsFor`). */
  slots: number;
  /**
   * The arena chunk holding the ball (−1: a precomputed table's, read-only), and its first slot in
   * that chunk's (or table's) `keys` / `costs`.
   */
  chunk: number;
  base: number;
  /** Queries answered since the cache last made room: the busiest balls are kept. */
  uses: number;
  /**
   * Slot s holds node + 1 at `keys[2s]` (0 = empty) and its tree edge at `keys[2s + 1]`, its cost at
   * `costs[s]`: 16 bytes a slot (a float64 key took 20), as memory a cold pass touches first is costly.
   */
  keys: Int32Array;
  costs: Float64Array;
}

export interface RouteBallOptions {
  /** Balls are grown to at least this radius (cost units): one search then serves many later queries. */
  minRadius: number;
  /** A ball too small for a query grows to the query's bound, and at least this factor of its radius. */
  growth: number;
  /** Queries beyond this radius run a live search and are not kept (a long leg is rare and its ball large). */
  maxRadius: number;
  /** Hash slots (16 bytes each, 2–2.3 per node) kept over all balls grown (a table's not counted); past it the cache makes room (memory stays bounded). */
  maxEntries: number;
}

/**
 * The balls of every node to one radius, computed once per network and travel mode (FMM's
 * upper-bounded origin–destination table, in the balls' own hash layout): a matcher starts from them
 * instead of filling its own ball by ball, and worker threads share one copy (`SharedArrayBuffer`s,
 * read-only once built). Balls a query needs larger are grown from them in the matcher's own arena.
 */
export interface BallTable {
  radius: number;
  /** Hash slots of node n's ball: `start[n]` … `start[n + 1] − 1`; none when the budget ran out first. */
  start: Int32Array;
  keys: Int32Array;
  costs: Float64Array;
}

/**
 * Searches every node to `radius`, in node order while the balls fit `maxSlots` hash slots: once to
 * size the table, once to fill it (a network too large for the budget stops searching where it runs out).
 */
export function buildBallTable(
  network: Network,
  workspace: DijkstraWorkspace,
  weights: Float64Array,
  radius: number,
  maxSlots: number,
): BallTable {
  const nodes = network.graph.nodeCount;
  const start = new Int32Array(new SharedArrayBuffer(4 * (nodes + 1)));
  let n = 0;
  for (; n < nodes; n++) {
    const slots = slotsFor(searchBall(workspace, weights, n, radius).length);
    if (start[n] + slots > maxSlots) break;
    start[n + 1] = start[n] + slots;
  }
  // A large network stops here: its remaining nodes fill their balls lazily.
  start.fill(start[n], n + 1);
  const total = start[nodes];
  const table: BallTable = {
    radius,
    start,
    keys: new Int32Array(new SharedArrayBuffer(8 * total)),
    costs: new Float64Array(new SharedArrayBuffer(8 * total)),
  };
  for (let node = 0; node < nodes; node++) {
    const ball = tableBall(table, node);
    if (ball) fillBall(ball, searchBall(workspace, weights, node, radius), workspace);
  }
  return table;
}

function searchBall(workspace: DijkstraWorkspace, weights: Float64Array, source: number, radius: number) {
  workspace.begin();
  workspace.place(source, 0, -1);
  workspace.openBorder(weights);
  return workspace.expand(weights, radius).reachedNodes();
}

/** Node n's ball in the table, if it has one. */
function tableBall(table: BallTable, n: number): Ball | undefined {
  const slots = table.start[n + 1] - table.start[n];
  if (slots === 0) return undefined;
  return { slots, chunk: -1, base: table.start[n], uses: 0, keys: table.keys, costs: table.costs };
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
  /** Ball of each source node, if any. */
  private readonly balls: (Ball | undefined)[];
  /** The precomputed table's ball of each node, what `balls` falls back to when the cache makes room. */
  private readonly tableBalls: (Ball | undefined)[];
  /**
   * Radius of each source's ball. Kept out of the ball objects: a regrowth in place rewrote the field,
   * and V8 then dropped the optimised code that had taken it for constant (recompiled mid cold pass).
   */
  private readonly radii: Float64Array;
  private arena = new SlotArena();
  private entries = 0;
  /** Hits and searches, for benchmarks; `cleared` counts the times the cache made room. */
  readonly stats = { hits: 0, grown: 0, live: 0, cleared: 0 };
  private readonly oneTarget = new Int32Array(1);

  constructor(
    private readonly network: Network,
    private readonly workspace: DijkstraWorkspace,
    private readonly weights: Float64Array,
    private readonly opts: RouteBallOptions,
    /** Precomputed balls (`buildBallTable`) on the same weights, if any. */
    readonly table?: BallTable,
  ) {
    const nodes = network.graph.nodeCount;
    this.tableBalls = Array.from({ length: nodes }, (_, n) => (table ? tableBall(table, n) : undefined));
    this.balls = new Array<Ball | undefined>(nodes).fill(undefined);
    this.radii = new Float64Array(nodes);
    this.forgetGrown();
  }

  /** Forgets every ball grown (the arena's memory is kept for the next ones). */
  clear(): void {
    this.forgetGrown();
    this.arena.reset();
  }

  /** Every node back to its table ball, if any, or none. */
  private forgetGrown(): void {
    const radius = this.table?.radius ?? 0;
    this.tableBalls.forEach((ball, n) => {
      this.balls[n] = ball;
      this.radii[n] = ball ? radius : 0;
    });
    this.entries = 0;
  }

  /**
   * Makes room when the cache is full: keeps the balls used most since the
   * last time, up to three quarters of the budget, moved together at the start
   * of the arena, and forgets the others. Starting
   * afresh instead cost a steady ingest a burst of searches every few thousand
   * traces (Monaco at 30 s: twice the searched nodes of a full set).
   */
  private makeRoom(): void {
    const busiest = this.balls
      .map((ball, source) => ({ ball, source }))
      .filter(
        (b): b is { ball: Ball; source: number } =>
          b.ball !== undefined && b.ball.chunk >= 0 && b.ball.uses > 0,
      )
      .sort((x, y) => y.ball.uses - x.ball.uses || x.source - y.source);
    const radii = this.radii.slice();
    this.forgetGrown();
    const kept: Ball[] = [];
    for (const { ball, source } of busiest) {
      const slots = ball.slots;
      if (this.entries + slots > KEEP_SHARE * this.opts.maxEntries) break;
      kept.push(ball);
      this.balls[source] = ball;
      this.radii[source] = radii[source];
      this.entries += slots;
    }
    this.arena.compact(kept);
  }

  /**
   * Fills `out[j]` with the cost from `source` to `targets[j]` when it is at
   * most `maxCost`, else Infinity.
   */
  costsTo(source: number, targets: Int32Array, count: number, maxCost: number, out: Float64Array): void {
    const ball = this.balls[source];
    // One lookup per target; a target outside a ball smaller than the bound needs a larger ball.
    if (ball && costsInBall(ball, this.radii[source], targets, count, maxCost, out)) {
      this.stats.hits++;
      ball.uses++;
      return;
    }
    if (maxCost > this.opts.maxRadius) {
      this.stats.live++;
      const tree = this.liveSearch(source, maxCost, targets, count);
      for (let j = 0; j < count; j++) out[j] = tree.cost[targets[j]];
      return;
    }
    this.stats.grown++;
    const wanted = Math.max(maxCost, this.opts.minRadius, ball ? this.opts.growth * this.radii[source] : 0);
    const radius = Math.min(wanted, this.opts.maxRadius);
    costsInBall(this.grow(source, radius, ball), radius, targets, count, maxCost, out);
  }

  /** Edges of a shortest path from `source` to `target` in travel order (no bound); null when unreachable. */
  pathTo(source: number, target: number): number[] | null {
    const ball = this.balls[source];
    if (ball && costIn(ball, target) !== Infinity) {
      this.stats.hits++;
      ball.uses++;
      return edgesTo(this.network, ball, target);
    }
    this.stats.live++;
    this.oneTarget[0] = target;
    const tree = this.liveSearch(source, Infinity, this.oneTarget, 1);
    if (tree.cost[target] === Infinity) return null;
    const edges: number[] = [];
    for (let n = target; tree.viaEdge[n] >= 0; n = this.network.graph.edgeFrom[tree.viaEdge[n]]) {
      edges.push(tree.viaEdge[n]);
    }
    return edges.reverse();
  }

  /**
   * A search from `source` to `maxCost` that stops once the targets are settled, not kept in a ball:
   * the balls' own stepwise search, so one compiled search serves both (see `DijkstraWorkspace.aimAt`).
   */
  private liveSearch(source: number, maxCost: number, targets: Int32Array, count: number): DijkstraWorkspace {
    const tree = this.workspace;
    tree.begin();
    tree.place(source, 0, -1);
    tree.aimAt(targets, count);
    tree.openBorder(this.weights);
    return tree.expand(this.weights, maxCost);
  }

  /**
   * First and last edge of a shortest path from `source` to `target` into `out[0]` and `out[1]`;
   * false when the path has no edge or there is none. Walks the cached tree without allocating (the
   * matcher asks this for many candidate pairs to see whether a route turns back).
   */
  pathEnds(source: number, target: number, out: Int32Array): boolean {
    const ball = this.balls[source];
    if (!ball || costIn(ball, target) === Infinity) {
      const edges = this.pathTo(source, target);
      if (!edges || edges.length === 0) return false;
      out[0] = edges[0];
      out[1] = edges[edges.length - 1];
      return true;
    }
    ball.uses++;
    let first = -1;
    let last = -1;
    for (let n = target; ;) {
      const via = ball.keys[2 * indexIn(ball, n) + 1];
      if (via < 0) break;
      if (last < 0) last = via;
      first = via;
      n = this.network.graph.edgeFrom[via];
    }
    out[0] = first;
    out[1] = last;
    return first >= 0;
  }

  /**
   * The ball of `source` to `radius`: a new search, or the old ball's search resumed from its border
   * (its nodes keep their exact costs and tree edges; growing 500 → 1,000 → 2,000 m used to search the
   * inner balls again each time, a quarter of all nodes searched on a cold start).
   */
  private grow(source: number, radius: number, old: Ball | undefined): Ball {
    const tree = this.workspace;
    tree.begin();
    if (old) placeBall(tree, old);
    else tree.place(source, 0, -1);
    tree.openBorder(this.weights);
    tree.expand(this.weights, radius);
    const reached = tree.reachedNodes();
    const slots = slotsFor(reached.length);
    // A table ball is shared and read-only: its larger self goes to the arena.
    const own = old !== undefined && old.chunk >= 0 ? old : undefined;
    if (own && own.slots === slots) {
      // As many slots as before: refilled in place, leaving no unused run in the arena.
      own.keys.fill(0, 2 * own.base, 2 * (own.base + slots));
      this.radii[source] = radius;
      own.uses++;
      fillBall(own, reached, tree);
      return own;
    }
    if (own) {
      this.entries -= own.slots;
      this.balls[source] = undefined;
      this.arena.release(own);
    }
    if (this.entries + slots > this.opts.maxEntries) {
      this.makeRoom();
      this.stats.cleared++;
    }
    const ball = this.arena.take(slots);
    this.radii[source] = radius;
    ball.uses = 1 + (old ? old.uses : 0);
    fillBall(ball, reached, tree);
    this.balls[source] = ball;
    this.entries += slots;
    return ball;
  }
}

/** Stores the reached nodes with their costs and tree edges in the ball's (empty) slots. */
function fillBall(ball: Ball, reached: Int32Array, tree: DijkstraWorkspace): void {
  for (let k = 0; k < reached.length; k++) {
    const node = reached[k];
    const s = freeSlot(ball, node);
    ball.keys[2 * s] = node + 1;
    ball.keys[2 * s + 1] = tree.viaEdge[node];
    ball.costs[s] = tree.cost[node];
  }
}

/** Puts every node of the ball in the search tree with its cost and tree edge. */
function placeBall(tree: DijkstraWorkspace, ball: Ball): void {
  const { keys, costs } = ball;
  for (let s = ball.base, end = ball.base + ball.slots; s < end; s++) {
    const key = keys[2 * s];
    if (key !== 0) tree.place(key - 1, costs[s], keys[2 * s + 1]);
  }
}

/**
 * Hash slots for `count` nodes: at least 8 and twice the count, rounded up to a power of two or 5/8, 6/8
 * or 7/8 of one. Powers of two alone left tables a third full on average and their memory, touched
 * for the first time in a cold pass, cost more than the few extra probes of tables nearly half full.
 */
function slotsFor(count: number): number {
  const wanted = Math.max(8, 2 * count);
  let pow = 8;
  while (pow < wanted) pow *= 2;
  const eighth = pow / 8;
  for (let k = 5; k < 8; k++) if (k * eighth >= wanted) return k * eighth;
  return pow;
}

/** Share of the budget the busiest balls may keep when the cache makes room. */
const KEEP_SHARE = 0.75;

/** Slots per arena chunk (8 bytes of key and tree edge + 8 of cost each): 4 MB. */
const CHUNK_SLOTS = 1 << 18;

/**
 * Hands out runs of zeroed hash slots from a few large typed arrays. The run a
 * regrown ball leaves is zeroed and handed out again to the next ball of its
 * size (a quarter of the slots a cold pass filled were such runs, and memory
 * touched for the first time is what a cold pass paid most for, see
 * docs/map-matching.md); `reset` zeroes what was handed out and starts again,
 * when the cache starts afresh.
 */
class SlotArena {
  private readonly chunks: ArenaChunk[] = [];
  private current = 0;
  /** Released runs by slot count: chunk and base of each, flat. */
  private readonly freeRuns = new Map<number, number[]>();

  take(slots: number): Ball {
    const free = this.freeRuns.get(slots);
    if (free !== undefined && free.length > 0) {
      const base = free.pop()!;
      return this.ballAt(free.pop()!, base, slots);
    }
    const { chunk, base } = this.place(slots);
    return this.ballAt(chunk, base, slots);
  }

  private ballAt(chunk: number, base: number, slots: number): Ball {
    const { keys, costs } = this.chunks[chunk];
    return { slots, chunk, base, uses: 0, keys, costs };
  }

  /** Zeroes a forgotten ball's run and keeps it for the next ball of its size. */
  release(ball: Ball): void {
    const slots = ball.slots;
    ball.keys.fill(0, 2 * ball.base, 2 * (ball.base + slots));
    let free = this.freeRuns.get(slots);
    if (free === undefined) this.freeRuns.set(slots, (free = []));
    free.push(ball.chunk, ball.base);
  }

  reset(): void {
    this.freeRuns.clear();
    for (const chunk of this.chunks) {
      chunk.keys.fill(0, 0, 2 * chunk.used);
      chunk.used = 0;
    }
    this.current = 0;
  }

  /**
   * Moves the kept balls, in address order, to the start of the arena (a ball
   * only ever moves down, so nothing unmoved is overwritten), zeroes the rest
   * and starts their use counts afresh.
   */
  compact(kept: Ball[]): void {
    this.freeRuns.clear();
    kept.sort((x, y) => x.chunk - y.chunk || x.base - y.base);
    const usedBefore = this.chunks.map((chunk) => chunk.used);
    for (const chunk of this.chunks) chunk.used = 0;
    this.current = 0;
    for (const ball of kept) {
      const slots = ball.slots;
      const { chunk, base } = this.place(slots);
      const to = this.chunks[chunk];
      if (chunk === ball.chunk) {
        to.keys.copyWithin(2 * base, 2 * ball.base, 2 * (ball.base + slots));
        to.costs.copyWithin(base, ball.base, ball.base + slots);
      } else {
        to.keys.set(ball.keys.subarray(2 * ball.base, 2 * (ball.base + slots)), 2 * base);
        to.costs.set(ball.costs.subarray(ball.base, ball.base + slots), base);
      }
      Object.assign(ball, { chunk, base, keys: to.keys, costs: to.costs, uses: 0 });
    }
    this.chunks.forEach((chunk, c) => chunk.keys.fill(0, 2 * chunk.used, 2 * usedBefore[c]));
  }

  /** The first chunk from the current one with room for `slots`, allocated when none has. */
  private place(slots: number): { chunk: number; base: number } {
    while (this.current < this.chunks.length) {
      const chunk = this.chunks[this.current];
      if (chunk.used + slots <= chunk.costs.length) {
        chunk.used += slots;
        return { chunk: this.current, base: chunk.used - slots };
      }
      this.current++;
    }
    const size = Math.max(CHUNK_SLOTS, slots);
    this.chunks.push(new ArenaChunk(size, slots));
    return { chunk: this.current, base: 0 };
  }
}

/**
 * One chunk of the arena. A class, not an object literal: the second chunk (mid cold pass) made V8
 * forget the typed-array classes of a literal's fields and throw away the code that had relied on them.
 */
class ArenaChunk {
  readonly keys: Int32Array;
  readonly costs: Float64Array;
  constructor(
    size: number,
    public used: number,
  ) {
    this.keys = new Int32Array(2 * size);
    this.costs = new Float64Array(size);
  }
}

/** Fibonacci hashing of a node id into the ball's slots, linear probing; returns an absolute slot. */
function firstSlot(ball: Ball, node: number): number {
  // The hash's top 24 bits scaled to the table size (any size, not only powers of two); exact in doubles.
  return ball.base + Math.floor(((Math.imul(node, 0x9e3779b1) >>> 8) * ball.slots) / 0x1000000);
}

function nextSlot(ball: Ball, s: number): number {
  return s + 1 < ball.base + ball.slots ? s + 1 : ball.base;
}

function freeSlot(ball: Ball, node: number): number {
  let s = firstSlot(ball, node);
  while (ball.keys[2 * s] !== 0) s = nextSlot(ball, s);
  return s;
}

/** Absolute slot of `node` in the ball, −1 when it is not in it. */
function indexIn(ball: Ball, node: number): number {
  const keys = ball.keys;
  const key = node + 1;
  for (let s = firstSlot(ball, node); ; s = nextSlot(ball, s)) {
    const v = keys[2 * s];
    if (v === key) return s;
    if (v === 0) return -1;
  }
}

function costIn(ball: Ball, node: number): number {
  const s = indexIn(ball, node);
  return s < 0 ? Infinity : ball.costs[s];
}

/**
 * Costs of the targets within the bound from the ball (Infinity beyond it);
 * false when a target is outside a ball whose radius is below the bound.
 */
function costsInBall(
  ball: Ball,
  radius: number,
  targets: Int32Array,
  count: number,
  maxCost: number,
  out: Float64Array,
): boolean {
  for (let j = 0; j < count; j++) {
    const k = indexIn(ball, targets[j]);
    if (k < 0) {
      if (radius < maxCost) return false;
      out[j] = Infinity;
    } else {
      const cost = ball.costs[k];
      out[j] = cost <= maxCost ? cost : Infinity;
    }
  }
  return true;
}

function edgesTo(network: Network, ball: Ball, target: number): number[] {
  const edges: number[] = [];
  for (let n = target; ;) {
    const via = ball.keys[2 * indexIn(ball, n) + 1];
    if (via < 0) break;
    edges.push(via);
    n = network.graph.edgeFrom[via];
  }
  return edges.reverse();
}
