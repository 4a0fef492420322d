import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import {
  isDeadLocalOwner,
  isPidAlive,
  leaseOwnerId,
  parseLeaseOwner,
  thisProcess,
} from "../../src/jobs/lease-owner.js";
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

  it("claims queued jobs oldest first, each once", async () => {
    const { queue, store } = fresh();
    const a = await queue.enqueue("analysis", { uuid: "a" });
    const b = await queue.enqueue("analysis", { uuid: "b" });
    assert.equal(a.state, "queued");
    const first = (await queue.claim("w1", 60_000))!;
    assert.deepEqual(
      [first.id, first.payload, first.state, first.attempts],
      [a.id, { uuid: "a" }, "running", 1],
    );
    assert.equal(first.leaseOwner, "w1");
    assert.equal(first.leaseExpiresAt, 1_060_000);
    assert.equal((await queue.claim("w2", 60_000))!.id, b.id);
    assert.equal(await queue.claim("w3", 60_000), null);
    await store.close();
  });

  it("claims a lower-priority job (is_massive_queue) after every ordinary one", async () => {
    const { queue, store } = fresh();
    const massive = await queue.enqueue("analysis", { uuid: "massive" }, { priority: -1 });
    const ordinary = await queue.enqueue("analysis", { uuid: "ordinary" });
    assert.equal(massive.priority, -1);
    assert.equal((await queue.claim("w1", 60_000))!.id, ordinary.id);
    assert.equal((await queue.claim("w2", 60_000))!.id, massive.id);
    await store.close();
  });

  it("completes and fails only under the owning worker's lease", async () => {
    const { queue, store } = fresh();
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
    assert.deepEqual(
      [(await queue.get(other.id))!.state, (await queue.get(other.id))!.failureReason],
      ["failed", "zone set vanished"],
    );
    await store.close();
  });

  it("reclaims a running job whose lease expired (crash recovery); the old worker loses it", async () => {
    const { queue, clock, store } = fresh();
    const job = await queue.enqueue("analysis", {});
    await queue.claim("crashed", 1000);
    clock.now += 1000;
    assert.equal(await queue.claim("w2", 1000), null, "the lease is still valid at its expiry instant");
    clock.now += 1;
    const again = (await queue.claim("w2", 1000))!;
    assert.deepEqual([again.id, again.attempts, again.leaseOwner], [job.id, 2, "w2"]);
    assert.equal(await queue.heartbeat(job.id, "crashed", 1000), false);
    assert.equal(await queue.complete(job.id, "crashed"), false);
    assert.equal(await queue.complete(job.id, "w2"), true);
    await store.close();
  });

  it("releases a running job back to the queue without counting the attempt, only for its owner", async () => {
    const { queue, store } = fresh();
    const job = await queue.enqueue("analysis", {});
    await queue.claim("w1", 60_000);
    assert.equal(await queue.release(job.id, "intruder"), false);
    assert.equal(await queue.release(job.id, "w1"), true);
    const released = (await queue.get(job.id))!;
    assert.deepEqual(
      [released.state, released.attempts, released.leaseOwner, released.leaseExpiresAt],
      ["queued", 0, null, null],
    );
    // Claimable at once, by anyone; the old owner can no longer touch it.
    const again = (await queue.claim("w2", 60_000))!;
    assert.deepEqual([again.id, again.attempts], [job.id, 1]);
    assert.equal(await queue.complete(job.id, "w1"), false);
    await store.close();
  });

  it("cancels queued and running jobs, not finished ones; cancelled jobs are never claimed", async () => {
    const { queue, store } = fresh();
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
    await store.close();
  });

  it("persists jobs across reopening the same file", async () => {
    const file = join(dir, "persist.db");
    const first = openQueue(file);
    const waiting = await first.queue.enqueue("analysis", { uuid: "kept" });
    const interrupted = await first.queue.enqueue("analysis", { uuid: "interrupted" });
    await first.queue.claim("w1", 1000); // takes `waiting`
    await first.store.close();

    const second = openQueue(file);
    second.clock.now += 5000; // the process was down longer than the lease
    const reclaimed = (await second.queue.claim("w2", 1000))!;
    assert.deepEqual([reclaimed.id, reclaimed.attempts], [waiting.id, 2]);
    assert.deepEqual((await second.queue.claim("w2", 1000))!.payload, { uuid: "interrupted" });
    assert.equal((await second.queue.get(interrupted.id))!.state, "running");
    await second.store.close();
  });

  it("at a restart takes back at once the leases of dead processes of this host, not of live ones or other hosts", async () => {
    const file = join(dir, `leases${++n}.db`);
    const crashed = openQueue(file);
    // A process that has exited: signalling its pid answers ESRCH.
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid!;
    const host = hostname();
    const owners = {
      dead: `${host}:${deadPid}:n0nce:r1`,
      live: `${host}:${process.ppid}:n0nce:r1`,
      otherHost: `elsewhere.example:${deadPid}:n0nce:r1`,
      samePidEarlierStart: `${host}:${process.pid}:earlier:r1`,
      oldForm: "runner-5f0c",
    };
    const jobOf: Record<string, string> = {};
    for (const [name, owner] of Object.entries(owners)) {
      await crashed.queue.enqueue("analysis", { uuid: name });
      jobOf[name] = (await crashed.queue.claim(owner, 60_000))!.id;
    }
    await crashed.store.close();

    // The restarted process: same file, same clock reading (no lease has run out).
    const restarted = openQueue(file);
    const self = { host, pid: process.pid, nonce: "current" };
    const reclaimed = await restarted.queue.expireLeases((owner) => isDeadLocalOwner(owner, self));
    assert.deepEqual(reclaimed.map((j) => j.id).sort(), [jobOf.dead, jobOf.samePidEarlierStart].sort());

    const taken = [
      (await restarted.queue.claim("new", 60_000))!,
      (await restarted.queue.claim("new", 60_000))!,
    ];
    assert.deepEqual(taken.map((j) => j.id).sort(), reclaimed.map((j) => j.id).sort());
    assert.ok(taken.every((j) => j.attempts === 2 && j.leaseOwner === "new"));
    assert.equal(
      await restarted.queue.claim("new", 60_000),
      null,
      "live, other-host and old-form leases are kept",
    );
    for (const name of ["live", "otherHost", "oldForm"] as const)
      assert.equal((await restarted.queue.get(jobOf[name]))!.leaseOwner, owners[name]);
    // The predecessor that lost its job cannot finish it any more.
    assert.equal(await restarted.queue.complete(jobOf.dead, owners.dead), false);
    await restarted.store.close();
  });

  it("parses lease owner ids of this form only; a live pid or this very process is not dead", () => {
    const id = leaseOwnerId("r7");
    assert.deepEqual(parseLeaseOwner(id), { host: hostname(), pid: process.pid, nonce: thisProcess().nonce });
    assert.equal(isDeadLocalOwner(id), false);
    assert.equal(parseLeaseOwner("runner-5f0c"), null);
    assert.equal(isPidAlive(process.pid), true);
    assert.equal(isPidAlive(spawnSync(process.execPath, ["-e", ""]).pid!), false);
  });
});
