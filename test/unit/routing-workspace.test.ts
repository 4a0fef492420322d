import { test } from "node:test";
import assert from "node:assert/strict";
import { DijkstraWorkspace, dijkstra, lengthWeight, pathTo } from "../../src/engine/network/routing.js";
import { networkOf } from "../helpers/metric-network.js";

// A square block 1-2-3-4 with a oneway diagonal 1→3.
const network = networkOf([
  {
    wayId: 1,
    from: 1,
    to: 2,
    xy: [
      [0, 0],
      [100, 0],
    ],
  },
  {
    wayId: 2,
    from: 2,
    to: 3,
    xy: [
      [100, 0],
      [100, 100],
    ],
  },
  {
    wayId: 3,
    from: 3,
    to: 4,
    xy: [
      [100, 100],
      [0, 100],
    ],
  },
  {
    wayId: 4,
    from: 4,
    to: 1,
    xy: [
      [0, 100],
      [0, 0],
    ],
  },
  {
    wayId: 5,
    from: 1,
    to: 3,
    xy: [
      [0, 0],
      [100, 100],
    ],
    oneway: true,
  },
]);

test("a reused workspace gives the same trees as fresh searches, run after run", () => {
  const ws = new DijkstraWorkspace(network);
  const weight = lengthWeight(network);
  for (const source of [0, 2, 1, 3, 0]) {
    const fresh = dijkstra(network, source, weight);
    const reused = ws.run(source, weight);
    assert.deepEqual([...reused.cost], [...fresh.cost]);
    assert.deepEqual([...reused.viaEdge], [...fresh.viaEdge]);
  }
});

test("the workspace respects oneways, bounds and per-edge weight arrays", () => {
  const ws = new DijkstraWorkspace(network);
  const lengths = Float64Array.from({ length: network.size * 2 }, (_, e) => network.segments[e >> 1].lengthM);
  lengths[4 * 2 + 1] = Infinity; // the oneway's backward edge does not exist anyway
  // Node indexes follow first appearance: junction 1 → 0, 2 → 1, 3 → 2, 4 → 3.
  const to3 = pathTo(network, ws.run(0, lengths), 2);
  assert.deepEqual(to3, [8]);
  const back = ws.run(2, lengths);
  assert.ok(
    Math.abs(back.cost[0] - 200) < 1,
    `3 → 1 goes round the block, not up the oneway: ${back.cost[0]}`,
  );
  const bounded = ws.run(0, lengths, { maxCost: 120 });
  assert.ok(bounded.cost[1] < 101 && bounded.cost[3] < 101);
  assert.equal(bounded.cost[2], Infinity, "the diagonal (141 m) is beyond the 120 m bound");
  assert.ok(Math.abs(ws.run(0, lengths, { maxCost: 150 }).cost[2] - Math.SQRT2 * 100) < 1);
});
