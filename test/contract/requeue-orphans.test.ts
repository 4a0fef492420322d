import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { AnalysisSpec } from "../../src/domain/analyses/spec.js";
import type { Store } from "../../src/app/ports/store.js";
import {
  ANALYSIS_JOB,
  createAnalysis,
  ORPHAN_GRACE_MS,
  requeueOrphans,
  type AnalysisJobPayload,
} from "../../src/app/analyses/lifecycle.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { withQueueFromEnv } from "../../src/store/open.js";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { TEST_REDIS_URL } from "../helpers/distributed.js";
import { backends, queueBackends } from "./backends.js";

/**
 * Creating an analysis commits it before its job is enqueued, and `requeueOrphans` (run by every worker
 * process) gives a job to each unfinished analysis whose job is missing or ended: on the stores' own
 * queues and on Redis, where the queue is outside the database's transactions.
 */
const stores = await backends();
const queues = await queueBackends();
const bull = queues.find((q) => q.name === "bullmq")!;
after(async () => {
  await Promise.all([...stores, ...queues].map((b) => b.dispose()));
});

interface Setup {
  name: string;
  skip?: string;
  open(): Promise<Store>;
}

/** The Redis-backed stores of the tests and the SQLite stores under them, removed at the end. */
const opened: { store: Store; sqlite: SqliteStore }[] = [];

const setups: Setup[] = [
  ...stores.map((b) => ({ name: `${b.name}, its own queue`, skip: b.skip, open: () => b.open() })),
  {
    name: "sqlite, the BullMQ queue on Redis",
    skip: bull.skip,
    async open() {
      const prefix = `sf-test-requeue-${process.pid}-${opened.length}`;
      const sqlite = new SqliteStore(":memory:");
      const store = await withQueueFromEnv(sqlite, {
        STREETFLOW_REDIS_URL: TEST_REDIS_URL,
        STREETFLOW_REDIS_PREFIX: prefix,
      });
      opened.push({ store, sqlite });
      return store;
    },
  },
];
after(async () => {
  for (const { store, sqlite } of opened.splice(0)) {
    await (store.jobs as BullJobQueue).destroy(); // closes the queue too
    await sqlite.close();
  }
});

const spec = (orgId: string, name: string) =>
  ({
    uuid: crypto.randomUUID(),
    orgId,
    name,
    tags: [],
    loginEmail: "a@example.org",
  }) as unknown as AnalysisSpec;

/** Every job a runner could take now, by the analysis it is for. */
async function claimable(store: Store): Promise<string[]> {
  const uuids: string[] = [];
  for (let job; (job = await store.jobs.claim("w", 60_000));)
    uuids.push((job.payload as AnalysisJobPayload).analysisUuid);
  return uuids;
}

for (const setup of setups) {
  describe(`requeueing orphaned analyses: ${setup.name}`, { skip: setup.skip }, () => {
    it("a created analysis has its job; nothing to requeue", async () => {
      const store = await setup.open();
      const org = await store.accounts.createOrganization("Acme");
      const created = await createAnalysis(store, spec(org.id, "A"));
      assert.ok(created.jobId);
      assert.equal((await store.jobs.get(created.jobId))?.state, "queued");
      assert.deepEqual(await requeueOrphans(store), []);
      assert.deepEqual(await claimable(store), [created.uuid]);
    });

    it("a job that ended while its analysis is still queued (taken before the analysis was visible) is replaced", async () => {
      const store = await setup.open();
      const org = await store.accounts.createOrganization("Acme");
      const created = await createAnalysis(store, spec(org.id, "A"));
      const job = (await store.jobs.claim("early runner", 60_000))!;
      assert.equal(job.id, created.jobId);
      await store.jobs.complete(job.id, "early runner"); // what a runner did when it found no analysis
      // Two worker processes reconcile at once: one new job is recorded, the other one is cancelled.
      const [first, second] = await Promise.all([requeueOrphans(store), requeueOrphans(store)]);
      const requeued = [...first, ...second];
      assert.ok(requeued.length >= 1);
      const now = (await store.analyses.getByUuid(created.uuid))!;
      assert.notEqual(now.jobId, created.jobId);
      assert.equal((await store.jobs.get(now.jobId!))?.state, "queued");
      assert.deepEqual(await claimable(store), [created.uuid], "exactly one live job");
      assert.deepEqual(await requeueOrphans(store), []);
    });

    it("an analysis left without a job gets one once the grace period is over", async () => {
      const store = await setup.open();
      const org = await store.accounts.createOrganization("Acme");
      const s = spec(org.id, "A");
      // Its creator died between committing the analysis and enqueueing the job.
      const orphan = await store.analyses.create({ spec: s, jobId: null });
      assert.deepEqual(await requeueOrphans(store), [], "its creator may still be enqueueing it");
      const later = Date.parse(orphan.createdAt) + ORPHAN_GRACE_MS;
      const [requeued] = await requeueOrphans(store, later);
      assert.equal(requeued.uuid, s.uuid);
      const job = (await store.jobs.get(requeued.jobId!))!;
      assert.deepEqual([job.kind, job.state], [ANALYSIS_JOB, "queued"]);
      assert.deepEqual(await claimable(store), [s.uuid]);
    });

    it("finished and cancelled analyses are left alone", async () => {
      const store = await setup.open();
      const org = await store.accounts.createOrganization("Acme");
      const created = await createAnalysis(store, spec(org.id, "A"));
      await store.analyses.cancel(created.uuid);
      await store.jobs.cancel(created.jobId!);
      assert.deepEqual(await requeueOrphans(store, Date.now() + ORPHAN_GRACE_MS), []);
    });
  });
}
