import { workerData } from "node:worker_threads";
import { HEAVY_TASKS, type HeavyContext, type HeavyTaskName } from "../app/heavy/tasks.js";
import { claimAnswer, errorToWire, TASK_STATE, type WireError } from "../app/heavy/wire.js";
import { storeNetworks } from "../app/networks.js";
import { openStore, type StoreDescription } from "../store/open.js";

/** One heavy request as the pool hands it to a thread. */
export interface HeavyTaskMessage {
  /** A task, or `warm`: load every network, then wait until all `threads` threads have (see HeavyPool.start). */
  name: HeavyTaskName | "warm";
  input: unknown;
  /**
   * Shared with the pool (TASK_STATE): set when a thread starts the task, so the pool knows it left the
   * queue; then claimed by the thread or abandoned by the pool at the request's deadline.
   */
  started: Int32Array;
}

export type HeavyReply = { ok: true; value: unknown } | { ok: false; error: WireError };

/**
 * A thread of the heavy-request pool (src/main/heavy-pool.ts): its own store connection and
 * its own networks, built on first use, so threads share nothing and the event loop never waits for them.
 */
// Writable only for the later pages of long counts answers (countsResults) and their charge (usage).
const store = await openStore((workerData as { store: StoreDescription }).store, { thread: true });
const ctx: HeavyContext = {
  store,
  networks: storeNetworks(store.network),
};

export default async function runHeavyTask(message: HeavyTaskMessage): Promise<HeavyReply> {
  if (message.name === "warm") return await warm(message.started, message.input as number);
  Atomics.store(message.started, 0, TASK_STATE.started);
  Atomics.notify(message.started, 0);
  try {
    const task = HEAVY_TASKS[message.name] as (c: HeavyContext, input: unknown) => Promise<unknown>;
    const claim = () => claimAnswer(message.started);
    return { ok: true, value: await task({ ...ctx, claimAnswer: claim }, message.input) };
  } catch (err) {
    return { ok: false, error: errorToWire(err) };
  }
}

/**
 * Loads the networks, then counts itself in `arrived` and blocks this thread until every one of `threads`
 * has: one warm-up per thread, so each is ready before the pool takes requests (a thread starting under
 * a request would count against that request's wait limit).
 */
async function warm(arrived: Int32Array, threads: number): Promise<HeavyReply> {
  for (const { country } of await store.network.countries()) await ctx.networks.get(country);
  Atomics.add(arrived, 0, 1);
  Atomics.notify(arrived, 0);
  const deadline = Date.now() + 60_000;
  for (let n = Atomics.load(arrived, 0); n < threads && Date.now() < deadline; n = Atomics.load(arrived, 0))
    Atomics.wait(arrived, 0, n, 1_000);
  return { ok: true, value: null };
}
