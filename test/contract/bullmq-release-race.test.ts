import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createConnection, createServer, type Server } from "node:net";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { reachRedis, TEST_REDIS_URL } from "../helpers/distributed.js";
import { waitFor } from "../helpers/stop-process.js";

const reached = await reachRedis("the BullMQ release race test");
reached.client?.disconnect();

/** How late Redis's replies reach the worker on the slow link. */
const REPLY_DELAY_MS = 60;
const FAST_POLL = { withinMs: 10_000, everyMs: 0 };

/**
 * A TCP relay to Redis that holds back every reply by REPLY_DELAY_MS: a worker behind it learns that
 * its command ran well after the other workers could see its effect.
 */
function slowLinkTo(target: URL): Promise<{ server: Server; url: string }> {
  const server = createServer((client) => {
    const redis = createConnection(Number(target.port || 6379), target.hostname);
    client.on("data", (bytes) => redis.write(bytes));
    // Equal delays keep the replies in order.
    redis.on("data", (bytes) => setTimeout(() => client.writable && client.write(bytes), REPLY_DELAY_MS));
    client.on("close", () => redis.destroy());
    redis.on("close", () => client.destroy());
    client.on("error", () => redis.destroy());
    redis.on("error", () => client.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({ server, url: `redis://127.0.0.1:${port}` });
    }),
  );
}

/** Claims until a job comes, as fast as the queue answers (the race is a reply's delay wide). */
const claimNext = (queue: BullJobQueue, workerId: string) =>
  waitFor(
    async () => (await queue.claim(workerId, 60_000)) ?? undefined,
    () => "a job to claim",
    FAST_POLL,
  );

/**
 * A job handed back (shutdown) or parked by its split pass is not an attempt: another worker that takes
 * it the moment it is back must see the same attempt, even when the handing worker is slow to hear that
 * its move ran (the distributed test once saw a handed-back analysis run as attempt 2).
 */
describe("BullMQ queue: a job taken at once after its release", { skip: reached.skip ?? false }, () => {
  const prefix = `sf-release-race-${process.pid}-${Date.now().toString(36)}`;
  let link: { server: Server; url: string };
  let slow: BullJobQueue;
  const fast = new BullJobQueue({ url: TEST_REDIS_URL, prefix });
  before(async () => {
    link = await slowLinkTo(new URL(TEST_REDIS_URL));
    slow = new BullJobQueue({ url: link.url, prefix });
  });
  after(async () => {
    await slow.close();
    await fast.destroy();
    link.server.close();
  });

  it("keeps the attempt of a handed-back job", async () => {
    const job = await slow.enqueue("analysis", {});
    assert.equal((await slow.claim("slow", 60_000))?.attempts, 1);
    const taken = claimNext(fast, "fast");
    assert.equal(await slow.release(job.id, "slow"), true);
    const again = await taken;
    assert.deepEqual([again.id, again.attempts], [job.id, 1]);
    assert.equal(await fast.complete(job.id, "fast"), true);
  });

  it("keeps the attempt of a parent whose only child finished as soon as it was parked", async () => {
    const parent = await slow.enqueue("analysis", {});
    await slow.claim("slow", 60_000);
    const merged = (async () => {
      const child = await claimNext(fast, "fast");
      await waitFor(
        async () => ((await fast.queue.getJobState(parent.id)) === "waiting-children" ? true : undefined),
        () => "the parent parked",
        FAST_POLL,
      );
      assert.equal(await fast.completeWithResult(child.id, "fast", [new Uint8Array([1])]), true);
      return claimNext(fast, "fast");
    })();
    assert.equal(await slow.split(parent.id, "slow", [{ kind: "analysis-shard", payload: {} }]), "waiting");
    const merge = await merged;
    assert.deepEqual([merge.id, merge.attempts], [parent.id, 1]);
    assert.equal(await fast.complete(parent.id, "fast"), true);
  });
});
