import { workerData } from "node:worker_threads";
import { HEAVY_TASKS, type HeavyContext, type HeavyTaskName } from "../app/heavy/tasks.js";
import { errorToWire, type WireError } from "../app/heavy/wire.js";
import { NetworkRegistry } from "../engine/network/registry.js";
import { openStore, type StoreDescription } from "../store/open.js";

/** One heavy request as the pool hands it to a thread. */
export interface HeavyTaskMessage {
  name: HeavyTaskName;
  input: unknown;
  /** Shared with the pool: set to 1 when a thread starts the task, so the pool knows it left the queue. */
  started: Int32Array;
}

export type HeavyReply = { ok: true; value: unknown } | { ok: false; error: WireError };

/**
 * A thread of the heavy-request pool (src/main/heavy-pool.ts): its own read-only store connection and
 * its own networks, built on first use, so threads share nothing and the event loop never waits for them.
 */
const store = await openStore((workerData as { store: StoreDescription }).store, { readonly: true });
const ctx: HeavyContext = {
  store,
  networks: new NetworkRegistry(async (c) => await store.network.loadSegments(c)),
};

export default async function runHeavyTask(message: HeavyTaskMessage): Promise<HeavyReply> {
  Atomics.store(message.started, 0, 1);
  try {
    const task = HEAVY_TASKS[message.name] as (c: HeavyContext, input: unknown) => Promise<unknown>;
    return { ok: true, value: await task(ctx, message.input) };
  } catch (err) {
    return { ok: false, error: errorToWire(err) };
  }
}
