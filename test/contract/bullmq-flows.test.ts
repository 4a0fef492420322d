import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { reachRedis, TEST_REDIS_URL } from "../helpers/distributed.js";

const reached = await reachRedis("the BullMQ flows test");
reached.client?.disconnect();

/**
 * Only the holder of a job's lease splits it: a runner whose lease ran out while it planned the split
 * (another runner took the job meanwhile) adds no children and is told so, whether the job's children
 * are still running or all done.
 */
describe("BullMQ queue: split by a runner that lost the job", { skip: reached.skip ?? false }, () => {
  const queue = new BullJobQueue({
    url: TEST_REDIS_URL,
    prefix: `sf-flows-${process.pid}-${Date.now().toString(36)}`,
  });
  after(() => queue.destroy());
  const shard = { kind: "analysis-shard", payload: {} };

  it("adds nothing and answers lost; the new holder splits, then merges", async () => {
    const parent = await queue.enqueue("analysis", {});
    assert.equal((await queue.claim("stale", 60_000))?.id, parent.id);
    await queue.expireLeases((owner) => owner === "stale");
    assert.equal((await queue.claim("holder", 60_000))?.id, parent.id);
    assert.equal(await queue.split(parent.id, "stale", [shard, shard]), "lost");
    assert.equal(await queue.childCount(parent.id), 0);
    assert.equal(await queue.split(parent.id, "holder", [shard, shard]), "waiting");
    // A stale split of the merge round while the shards run: no merge parts among the children.
    assert.equal(await queue.split(parent.id, "stale", [shard], 2), "lost");
    assert.deepEqual(await queue.childRounds(parent.id), [2]);
    for (const _ of [1, 2]) {
      const child = (await queue.claim("w", 60_000))!;
      assert.equal(await queue.completeWithResult(child.id, "w", [new Uint8Array([1])]), true);
    }
    assert.equal((await queue.claim("holder", 60_000))?.id, parent.id);
    // Every child done: BullMQ would go on without the lock; the port asks who holds the job.
    assert.equal(await queue.split(parent.id, "stale", []), "lost");
    assert.equal(await queue.split(parent.id, "holder", []), "done");
  });
});
