import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { reachRedis, TEST_REDIS_URL } from "../helpers/distributed.js";

const reached = await reachRedis("the BullMQ wake-up test");
reached.client?.disconnect();

/**
 * On Redis a runner hears of every job that becomes claimable, whichever process made it so: the next
 * step of a split analysis is taken at once by an idle worker, not at its next poll.
 */
describe("BullMQ queue: onEnqueue hears other processes' jobs", { skip: reached.skip ?? false }, () => {
  const prefix = `sf-wake-${process.pid}-${Date.now().toString(36)}`;
  // Two processes' queues: one listens, the other enqueues and finishes children.
  const listening = new BullJobQueue({ url: TEST_REDIS_URL, prefix });
  const other = new BullJobQueue({ url: TEST_REDIS_URL, prefix });
  after(async () => {
    await listening.close();
    await other.destroy();
  });

  /** Resolves at the listener's next call. */
  const woken = () =>
    new Promise<void>((resolve) => {
      const stop = listening.onEnqueue((): void => {
        stop();
        resolve();
      });
    });

  it("is called for a job another process adds, and for a parent whose last child it finished", async () => {
    // The listener reads the events that come after it started reading: add jobs until it hears one.
    let heard = false;
    const first = woken().then(() => (heard = true));
    while (!heard) {
      await other.enqueue("ping", null);
      await Promise.race([first, new Promise((r) => setTimeout(r, 100))]);
    }
    for (let ping; (ping = await other.claim("w", 10_000));) await other.complete(ping.id, "w");
    const added = woken();
    const parent = await other.enqueue("analysis", { n: 1 });
    await added;
    assert.equal((await other.claim("w", 10_000))?.id, parent.id);
    assert.equal(await other.split(parent.id, "w", [{ kind: "analysis-shard", payload: {} }]), "waiting");
    const child = (await other.claim("w", 10_000))!;
    const parentBack = woken();
    assert.equal(await other.completeWithResult(child.id, "w", [new Uint8Array([1])]), true);
    await parentBack;
    assert.equal((await other.claim("w", 10_000))?.id, parent.id);
  });
});
