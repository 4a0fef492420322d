import { test } from "node:test";
import assert from "node:assert/strict";
import { buildBallTable, RouteBalls } from "../../src/engine/network/route-balls.js";
import { DijkstraWorkspace, pathTo } from "../../src/engine/network/routing.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import { gridNetwork } from "../../bench/lib/synthetic.js";

// A 40 × 40 street grid, 120 m blocks; edge weights vary so that shortest paths are unique.
const network = gridNetwork();
const rng = new Rng(3);
const weights = Float64Array.from({ length: network.segments.length * 2 }, (_, e) =>
  e % 7 === 3 ? Infinity : network.segments[e >> 1].lengthM * (1 + rng.next()),
);

function randomQuery() {
  const n = network.graph.nodeCount;
  const source = Math.floor(rng.next() * n);
  const targets = Int32Array.from({ length: 1 + Math.floor(rng.next() * 8) }, () =>
    Math.floor(rng.next() * n),
  );
  return { source, targets, maxCost: 100 + rng.next() * 2300 };
}

/**
 * 3,000 random queries, sources often repeated as in matching: every cost equals a bounded Dijkstra's,
 * and every `pathEvery`-th query's path a search's.
 */
function assertAnswersAsSearch(balls: RouteBalls, pathEvery = 0) {
  const reference = new DijkstraWorkspace(network);
  const out = new Float64Array(8);
  for (let q = 0; q < 3000; q++) {
    const { source, targets, maxCost } = randomQuery();
    const from = q % 3 === 0 ? source : Math.floor(source / 50);
    balls.costsTo(from, targets, targets.length, maxCost, out);
    const tree = reference.run(from, weights, { maxCost });
    targets.forEach((t, j) => assert.equal(out[j], tree.cost[t], `query ${q}, target ${t}`));
    if (pathEvery > 0 && q % pathEvery === 0) {
      const path = reference.run(from, weights, { targets: [targets[0]] });
      assert.deepEqual(balls.pathTo(from, targets[0]), pathTo(network, path, targets[0]), `path ${q}`);
    }
  }
}

test("route balls answer every query exactly as a bounded Dijkstra does, while balls grow, and after the cache starts afresh", () => {
  // Small limits, so queries hit, grow, exceed the largest ball and overflow the cache.
  const balls = new RouteBalls(network, new DijkstraWorkspace(network), weights, {
    minRadius: 300,
    growth: 1.25,
    maxRadius: 2000,
    maxEntries: 60_000,
  });
  assertAnswersAsSearch(balls);
  assert.ok(balls.stats.hits > balls.stats.grown, "most queries are answered from a ball");
  assert.ok(balls.stats.grown > 0 && balls.stats.live > 0 && balls.stats.cleared > 0);
});

test("route balls give the same shortest paths as a search, from a ball or live", () => {
  const reference = new DijkstraWorkspace(network);
  const balls = new RouteBalls(network, new DijkstraWorkspace(network), weights, {
    minRadius: 500,
    growth: 2,
    maxRadius: 4000,
    maxEntries: 1_000_000,
  });
  const out = new Float64Array(8);
  for (let q = 0; q < 500; q++) {
    const { source, targets, maxCost } = randomQuery();
    if (q % 2 === 0) balls.costsTo(source, targets, targets.length, maxCost, out);
    const tree = reference.run(source, weights, { targets: [targets[0]] });
    assert.deepEqual(balls.pathTo(source, targets[0]), pathTo(network, tree, targets[0]));
  }
});

test("a search resumed from a smaller ball's border reaches the same nodes, costs and tree edges as a fresh one", () => {
  const fresh = new DijkstraWorkspace(network);
  const resumed = new DijkstraWorkspace(network);
  for (let q = 0; q < 200; q++) {
    const source = Math.floor(rng.next() * network.graph.nodeCount);
    const inner = 100 + rng.next() * 1000;
    const outer = inner + rng.next() * 2000;
    // The inner ball, as RouteBalls keeps it: every reached node with its cost and tree edge.
    fresh.run(source, weights, { maxCost: inner });
    const ball = Array.from(fresh.reachedNodes(), (n) => [n, fresh.cost[n], fresh.viaEdge[n]] as const);
    resumed.begin();
    for (const [n, cost, via] of ball) resumed.place(n, cost, via);
    resumed.openBorder(weights);
    resumed.expand(weights, outer);
    fresh.run(source, weights, { maxCost: outer });
    const sorted = (nodes: Int32Array) => Array.from(nodes).sort((a, b) => a - b);
    assert.deepEqual(sorted(resumed.reachedNodes()), sorted(fresh.reachedNodes()), `query ${q}`);
    for (const n of fresh.reachedNodes()) {
      assert.equal(resumed.cost[n], fresh.cost[n], `query ${q}, node ${n}`);
      assert.equal(resumed.viaEdge[n], fresh.viaEdge[n], `query ${q}, node ${n}`);
    }
  }
});

test("route balls started from a precomputed table answer costs and paths as a search does, and never write to the table", () => {
  // A budget that leaves the last nodes out of the table, and a cache small enough to make room.
  const table = buildBallTable(network, new DijkstraWorkspace(network), weights, 600, 40_000);
  assert.ok(table.start[network.graph.nodeCount] > 0, "some nodes have a table ball");
  assert.ok(
    table.start[network.graph.nodeCount - 1] === table.start[network.graph.nodeCount],
    "the budget ran out",
  );
  const [keys, costs] = [table.keys.slice(), table.costs.slice()];
  const balls = new RouteBalls(
    network,
    new DijkstraWorkspace(network),
    weights,
    { minRadius: 300, growth: 1.5, maxRadius: 2000, maxEntries: 30_000 },
    table,
  );
  assertAnswersAsSearch(balls, 5);
  assert.ok(balls.stats.grown > 0 && balls.stats.live > 0 && balls.stats.cleared > 0);
  assert.deepEqual(table.keys, keys);
  assert.deepEqual(table.costs, costs);
});
