import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

/** A store over a temp FILE with a hand-driven clock. */
function openQueue(file: string) {
  const clock = { now: 1_000_000 };
  const store = new SqliteStore(file, { clock: () => clock.now });
  return { store, queue: store.jobs, clock };
}

describe("SQLite job queue", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-queue-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const fresh = () => openQueue(join(dir, `q${++n}.db`));

  it("claims queued jobs oldest first, each once", () => {
    const { queue, store } = fresh();
    const a = queue.enqueue("analysis", { uuid: "a" });
    const b = queue.enqueue("analysis", { uuid: "b" });
    assert.equal(a.state, "queued");
    const first = queue.claim("w1", 60_000)!;
    assert.deepEqual(
      [first.id, first.payload, first.state, first.attempts],
      [a.id, { uuid: "a" }, "running", 1],
    );
    assert.equal(first.leaseOwner, "w1");
    assert.equal(first.leaseExpiresAt, 1_060_000);
    assert.equal(queue.claim("w2", 60_000)!.id, b.id);
    assert.equal(queue.claim("w3", 60_000), null);
    store.close();
  });

  it("claims a lower-priority job (is_massive_queue) after every ordinary one", () => {
    const { queue, store } = fresh();
    const massive = queue.enqueue("analysis", { uuid: "massive" }, { priority: -1 });
    const ordinary = queue.enqueue("analysis", { uuid: "ordinary" });
    assert.equal(massive.priority, -1);
    assert.equal(queue.claim("w1", 60_000)!.id, ordinary.id);
    assert.equal(queue.claim("w2", 60_000)!.id, massive.id);
    store.close();
  });

  it("completes and fails only under the owning worker's lease", () => {
    const { queue, store } = fresh();
    const job = queue.enqueue("analysis", {});
    queue.claim("w1", 1000);
    assert.equal(queue.complete(job.id, "intruder"), false);
    assert.equal(queue.heartbeat(job.id, "w1", 1000), true);
    assert.equal(queue.complete(job.id, "w1"), true);
    assert.equal(queue.get(job.id)!.state, "done");
    assert.equal(queue.fail(job.id, "w1", "late"), false);
    const other = queue.enqueue("analysis", {});
    queue.claim("w1", 1000);
    assert.equal(queue.fail(other.id, "w1", "zone set vanished"), true);
    assert.deepEqual(
      [queue.get(other.id)!.state, queue.get(other.id)!.failureReason],
      ["failed", "zone set vanished"],
    );
    store.close();
  });

  it("reclaims a running job whose lease expired (crash recovery); the old worker loses it", () => {
    const { queue, clock, store } = fresh();
    const job = queue.enqueue("analysis", {});
    queue.claim("crashed", 1000);
    clock.now += 1000;
    assert.equal(queue.claim("w2", 1000), null, "the lease is still valid at its expiry instant");
    clock.now += 1;
    const again = queue.claim("w2", 1000)!;
    assert.deepEqual([again.id, again.attempts, again.leaseOwner], [job.id, 2, "w2"]);
    assert.equal(queue.heartbeat(job.id, "crashed", 1000), false);
    assert.equal(queue.complete(job.id, "crashed"), false);
    assert.equal(queue.complete(job.id, "w2"), true);
    store.close();
  });

  it("releases a running job back to the queue without counting the attempt, only for its owner", () => {
    const { queue, store } = fresh();
    const job = queue.enqueue("analysis", {});
    queue.claim("w1", 60_000);
    assert.equal(queue.release(job.id, "intruder"), false);
    assert.equal(queue.release(job.id, "w1"), true);
    const released = queue.get(job.id)!;
    assert.deepEqual(
      [released.state, released.attempts, released.leaseOwner, released.leaseExpiresAt],
      ["queued", 0, null, null],
    );
    // Claimable at once, by anyone; the old owner can no longer touch it.
    const again = queue.claim("w2", 60_000)!;
    assert.deepEqual([again.id, again.attempts], [job.id, 1]);
    assert.equal(queue.complete(job.id, "w1"), false);
    store.close();
  });

  it("cancels queued and running jobs, not finished ones; cancelled jobs are never claimed", () => {
    const { queue, store } = fresh();
    const queued = queue.enqueue("analysis", {});
    assert.equal(queue.cancel(queued.id), true);
    assert.equal(queue.claim("w1", 1000), null);
    const running = queue.enqueue("analysis", {});
    queue.claim("w1", 1000);
    assert.equal(queue.cancel(running.id), true);
    assert.equal(queue.heartbeat(running.id, "w1", 1000), false, "the worker learns of the cancel");
    assert.equal(queue.get(running.id)!.state, "cancelled");
    const done = queue.enqueue("analysis", {});
    queue.claim("w1", 1000);
    queue.complete(done.id, "w1");
    assert.equal(queue.cancel(done.id), false);
    assert.equal(queue.cancel("no-such-job"), false);
    store.close();
  });

  it("persists jobs across reopening the same file", () => {
    const file = join(dir, "persist.db");
    const first = openQueue(file);
    const waiting = first.queue.enqueue("analysis", { uuid: "kept" });
    const interrupted = first.queue.enqueue("analysis", { uuid: "interrupted" });
    first.queue.claim("w1", 1000); // takes `waiting`
    first.store.close();

    const second = openQueue(file);
    second.clock.now += 5000; // the process was down longer than the lease
    const reclaimed = second.queue.claim("w2", 1000)!;
    assert.deepEqual([reclaimed.id, reclaimed.attempts], [waiting.id, 2]);
    assert.deepEqual(second.queue.claim("w2", 1000)!.payload, { uuid: "interrupted" });
    assert.equal(second.queue.get(interrupted.id)!.state, "running");
    second.store.close();
  });
});
