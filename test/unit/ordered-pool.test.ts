import { it } from "node:test";
import assert from "node:assert/strict";
import { OrderedPool } from "../../src/engine/ordered-pool.js";

const WORKER = new URL("../helpers/start-counting-worker.mjs", import.meta.url).href;

/** A one-thread pool, started, and the shared memory its tasks note their starts in. */
async function oneThreadPool(tasksPerThread: number, tasksAheadPerThread?: number) {
  const pool = new OrderedPool({
    filename: WORKER,
    minThreads: 1,
    maxThreads: 1,
    tasksPerThread,
    tasksAheadPerThread,
  });
  const started = new Int32Array(new SharedArrayBuffer(4));
  const order = new Int32Array(new SharedArrayBuffer(4 * 16));
  await pool.run({ started, order, id: -1 });
  started[0] = 0;
  const run = (id: number) => pool.run<number>({ started, order, id });
  return { pool, started, order, run };
}

/** Blocks this thread (no event loop turn) until `n` tasks have started or `ms` have passed; answers how many. */
function blockUntilStarted(started: Int32Array, n: number, ms: number): number {
  const until = Date.now() + ms;
  for (let seen = Atomics.load(started, 0); seen < n; seen = Atomics.load(started, 0)) {
    const left = until - Date.now();
    if (left <= 0) return seen;
    Atomics.wait(started, 0, seen, left);
  }
  return Atomics.load(started, 0);
}

for (const tasksPerThread of [1, 2]) {
  it(`tasks start in the order asked (${tasksPerThread} per thread)`, async (t) => {
    const { pool, order, run } = await oneThreadPool(tasksPerThread);
    t.after(() => pool.destroy());
    const ids = [0, 1, 2, 3, 4, 5, 6, 7];
    await Promise.all(ids.map(run));
    assert.deepEqual([...order.subarray(0, ids.length)], ids);
  });
}

it("with two tasks per thread, a thread starts its next task while this thread is busy", async (t) => {
  const { pool, started, run } = await oneThreadPool(2);
  t.after(() => pool.destroy());
  const runs = [run(0), run(1)];
  // This thread never turns its event loop meanwhile: the second task was handed over with the first.
  assert.equal(blockUntilStarted(started, 2, 30_000), 2);
  assert.deepEqual(await Promise.all(runs), [0, 1]);
});

it("with one task per thread, the next task waits for this thread to hand it over", async (t) => {
  const { pool, started, run } = await oneThreadPool(1);
  t.after(() => pool.destroy());
  const runs = [run(0), run(1)];
  // The first starts; the second cannot until this thread takes the first's answer.
  assert.equal(blockUntilStarted(started, 1, 30_000), 1);
  assert.equal(blockUntilStarted(started, 2, 300), 1);
  assert.deepEqual(await Promise.all(runs), [0, 1]);
});

it("handed ahead, the tasks in the line start while this thread is busy, and later ones wait again", async (t) => {
  const { pool, started, run } = await oneThreadPool(1, 4);
  t.after(() => pool.destroy());
  const runs = [run(0), run(1), run(2)];
  pool.handAhead();
  const later = run(3);
  // Three tasks reached the thread before this one blocked; the fourth, asked after, waits in the line.
  assert.equal(blockUntilStarted(started, 3, 30_000), 3);
  assert.equal(blockUntilStarted(started, 4, 300), 3);
  assert.deepEqual(await Promise.all([...runs, later]), [0, 1, 2, 3]);
});

it("destroying the pool fails the task running and the tasks still in its line, which never start", async () => {
  const { pool, started, order } = await oneThreadPool(1);
  const hold = new Int32Array(new SharedArrayBuffer(4));
  const runs = [0, 1, 2].map((id) =>
    pool.run<number>({ started, order, id, hold: id === 0 ? hold : undefined }),
  );
  assert.equal(blockUntilStarted(started, 1, 30_000), 1);
  const destroyed = pool.destroy();
  const outcomes = await Promise.allSettled(runs);
  Atomics.store(hold, 0, 1);
  Atomics.notify(hold, 0);
  await destroyed;
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ["rejected", "rejected", "rejected"],
  );
  assert.equal(Atomics.load(started, 0), 1);
  await assert.rejects(pool.run({ started, order, id: 3 }), /closed before the task started/);
});
