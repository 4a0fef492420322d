import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { queueBackends } from "./backends.js";

/**
 * The JobQueue port's contract, run against every backend: the stores' queues (leases on a hand-driven
 * clock) and BullMQ on Redis (leases in real time, LEASE long).
 */
const all = await queueBackends();
const LEASE = 1000;
after(() => Promise.all(all.map((b) => b.dispose())));

for (const backend of all) {
  describe(`JobQueue contract: ${backend.name}`, { skip: backend.skip }, () => {
    const fresh = () => backend.open();

    it("claims queued jobs oldest first, each once", async () => {
      const { queue } = await fresh();
      const a = await queue.enqueue("analysis", { uuid: "a" });
      const b = await queue.enqueue("analysis", { uuid: "b" });
      assert.equal(a.state, "queued");
      const first = (await queue.claim("w1", 60_000))!;
      assert.deepEqual(
        [first.id, first.payload, first.state, first.attempts, first.leaseOwner],
        [a.id, { uuid: "a" }, "running", 1, "w1"],
      );
      if (backend.name !== "bullmq") assert.equal(first.leaseExpiresAt, 1_060_000);
      assert.equal((await queue.claim("w2", 60_000))!.id, b.id);
      assert.equal(await queue.claim("w3", 60_000), null);
    });

    it("claims a lower-priority job after every ordinary one", async () => {
      const { queue } = await fresh();
      const massive = await queue.enqueue("analysis", { uuid: "massive" }, { priority: -1 });
      const ordinary = await queue.enqueue("analysis", { uuid: "ordinary" });
      assert.equal(massive.priority, -1);
      assert.equal((await queue.claim("w1", 60_000))!.id, ordinary.id);
      assert.equal((await queue.claim("w2", 60_000))!.id, massive.id);
    });

    it("completes and fails only under the owning worker's lease", async () => {
      const { queue } = await fresh();
      const job = await queue.enqueue("analysis", {});
      await queue.claim("w1", 1000);
      assert.equal(await queue.complete(job.id, "intruder"), false);
      assert.equal(await queue.heartbeat(job.id, "w1", 1000), true);
      assert.equal(await queue.complete(job.id, "w1"), true);
      assert.equal((await queue.get(job.id))!.state, "done");
      assert.equal(await queue.fail(job.id, "w1", "late"), false);
      const other = await queue.enqueue("analysis", {});
      await queue.claim("w1", 1000);
      assert.equal(await queue.fail(other.id, "w1", "zone set vanished"), true);
      const failed = (await queue.get(other.id))!;
      assert.deepEqual([failed.state, failed.failureReason], ["failed", "zone set vanished"]);
    });

    it("reclaims a running job whose lease expired; the old worker loses it", async () => {
      const { queue, passTime, exactClock } = await fresh();
      const job = await queue.enqueue("analysis", {});
      await queue.claim("crashed", LEASE);
      if (exactClock)
        assert.equal(
          await passTime(LEASE, () => queue.claim("w2", LEASE)),
          null,
          "valid at its expiry instant",
        );
      const again = (await passTime(exactClock ? 1 : LEASE, () => queue.claim("w2", 60_000)))!;
      assert.deepEqual([again.id, again.attempts, again.leaseOwner], [job.id, 2, "w2"]);
      assert.equal(await queue.heartbeat(job.id, "crashed", 1000), false);
      assert.equal(await queue.complete(job.id, "crashed"), false);
      assert.equal(await queue.complete(job.id, "w2"), true);
    });

    it("releases a running job without counting the attempt, only for its owner", async () => {
      const { queue } = await fresh();
      const job = await queue.enqueue("analysis", {});
      await queue.claim("w1", 60_000);
      assert.equal(await queue.release(job.id, "intruder"), false);
      assert.equal(await queue.release(job.id, "w1"), true);
      const released = (await queue.get(job.id))!;
      assert.deepEqual(
        [released.state, released.attempts, released.leaseOwner, released.leaseExpiresAt],
        ["queued", 0, null, null],
      );
      const again = (await queue.claim("w2", 60_000))!;
      assert.deepEqual([again.id, again.attempts], [job.id, 1]);
      assert.equal(await queue.complete(job.id, "w1"), false);
    });

    it("cancels queued and running jobs, not finished ones; cancelled jobs are never claimed", async () => {
      const { queue } = await fresh();
      const queued = await queue.enqueue("analysis", {});
      assert.equal(await queue.cancel(queued.id), true);
      assert.equal(await queue.claim("w1", 1000), null);
      const running = await queue.enqueue("analysis", {});
      await queue.claim("w1", 1000);
      assert.equal(await queue.cancel(running.id), true);
      assert.equal(await queue.heartbeat(running.id, "w1", 1000), false, "the worker learns of the cancel");
      assert.equal((await queue.get(running.id))!.state, "cancelled");
      const done = await queue.enqueue("analysis", {});
      await queue.claim("w1", 1000);
      await queue.complete(done.id, "w1");
      assert.equal(await queue.cancel(done.id), false);
      assert.equal(await queue.cancel("no-such-job"), false);
      assert.equal(await queue.get("no-such-job"), null);
    });

    it("ends the leases of owners said to be gone, so the next claim takes their jobs", async () => {
      const { queue } = await fresh();
      const dead = await queue.enqueue("analysis", { uuid: "dead" });
      const live = await queue.enqueue("analysis", { uuid: "live" });
      await queue.claim("host:1:dead", 60_000);
      await queue.claim("host:2:live", 60_000);
      const ended = await queue.expireLeases((owner) => owner.endsWith(":dead"));
      assert.deepEqual(
        ended.map((j) => j.id),
        [dead.id],
      );
      const taken = (await queue.claim("new", 60_000))!;
      assert.deepEqual([taken.id, taken.attempts, taken.leaseOwner], [dead.id, 2, "new"]);
      assert.equal(await queue.claim("new", 60_000), null);
      assert.equal((await queue.get(live.id))!.leaseOwner, "host:2:live");
      assert.equal(await queue.complete(dead.id, "host:1:dead"), false);
    });

    it("gives each job to one worker when many claim at once", async () => {
      const { queue } = await fresh();
      const ids = [];
      for (let i = 0; i < 12; i++) ids.push((await queue.enqueue("analysis", { i })).id);
      const claims = await Promise.all(
        Array.from({ length: 16 }, (_, w) => Promise.resolve(queue.claim(`w${w}`, 60_000))),
      );
      const taken = claims.filter((j) => j !== null).map((j) => j.id);
      assert.deepEqual([...taken].sort(), [...ids].sort());
    });

    it("keeps jobs across reopening the store", async () => {
      const first = await fresh();
      const waiting = await first.queue.enqueue("analysis", { uuid: "kept" });
      const queue = await backend.reopen(first.queue);
      const reclaimed = (await queue.claim("w2", 1000))!;
      assert.deepEqual(
        [reclaimed.id, reclaimed.payload, reclaimed.attempts],
        [waiting.id, { uuid: "kept" }, 1],
      );
    });
  });
}
