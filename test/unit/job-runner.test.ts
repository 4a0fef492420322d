import { ANALYSIS_WORKER } from "../../src/main/runtime.js";
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cancelAnalysis, createAnalysis } from "../../src/app/analyses/lifecycle.js";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { storeNetworks } from "../../src/app/networks.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeOrg } from "../helpers/app.js";
import { odRequest, seedAnalysisData } from "../helpers/analyses.js";

async function until<T>(probe: () => Promise<T | undefined>, deadlineMs = 15_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("condition not met before the deadline");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("job runner", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-runner-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A store over a temp file holding one queued analysis; `clock` drives the queue's leases. */
  async function setup(name: string, computeModule?: string) {
    const clock = { now: 1_000_000 };
    const store = new SqliteStore(join(dir, `${name}.db`), { clock: () => clock.now });
    const org = await makeOrg(store, "Runner org");
    await seedAnalysisData(store, org.orgId);
    const networks = storeNetworks(store.network);
    const spec = await validateAnalysisRequest(odRequest(org.email, { analysis_name: name }), {
      store,
      networks,
      orgId: org.orgId,
    });
    const analysis = await createAnalysis(store, spec);
    const runner = new JobRunner({
      store,
      queue: store.jobs,
      workerStore: { kind: "sqlite", file: store.file },
      workerModule: ANALYSIS_WORKER,
      pollMs: 10,
      leaseMs: 1000,
      ...(computeModule ? { computeModule } : {}),
    });
    return { store, clock, analysis, runner };
  }

  it("leaves no job behind when creating an analysis clashes on its name", async () => {
    const { store, analysis } = await setup("clash");
    const twin = { ...analysis.spec, uuid: crypto.randomUUID(), name: "CLASH" };
    await assert.rejects(
      async () => await createAnalysis(store, twin),
      /an analysis named "CLASH" already exists/,
    );
    assert.equal((await store.jobs.claim("w", 1000))!.id, analysis.jobId);
    assert.equal(await store.jobs.claim("w", 1000), null);
    assert.equal(await store.analyses.getByUuid(twin.uuid), null);
    await store.close();
  });

  it("starts an analysis created in its own process at once, woken by the enqueue rather than its poll", async () => {
    const { store, analysis: first } = await setup("woken");
    // The queue starts empty: the first analysis' job is taken and finished by someone else.
    assert.equal((await store.jobs.claim("other", 1000))!.id, first.jobId);
    await store.jobs.complete(first.jobId!, "other");
    let claimsAnswered = 0;
    const queue = {
      ...store.jobs,
      claim: async (workerId: string, leaseMs: number) => {
        const job = await store.jobs.claim(workerId, leaseMs);
        claimsAnswered++;
        return job;
      },
    };
    // Polling once an hour: after its first, empty claim, only the enqueue's wake-up can start the analysis.
    const runner = new JobRunner({
      store,
      queue,
      workerStore: { kind: "sqlite", file: store.file },
      workerModule: ANALYSIS_WORKER,
      pollMs: 3_600_000,
      leaseMs: 60_000,
    });
    await runner.start();
    try {
      await until(async () => (claimsAnswered === 1 ? true : undefined));
      const analysis = await createAnalysis(store, {
        ...first.spec,
        uuid: crypto.randomUUID(),
        name: "woken 2",
      });
      const state = async () => (await store.analyses.getByUuid(analysis.uuid))!.state;
      await until(async () => ((await state()) === "done" ? true : undefined));
    } finally {
      await runner.stop();
      await store.close();
    }
  });

  it("resumes a job whose runner crashed once its lease expires", async () => {
    const { store, clock, analysis, runner } = await setup("resumed");
    await store.jobs.claim("crashed-runner", 1000);
    await store.analyses.markRunning(analysis.uuid);
    await runner.start();
    clock.now += 1001; // the crashed runner's lease runs out
    const done = await until(async () => {
      const a = (await store.analyses.getByUuid(analysis.uuid))!;
      return a.state === "done" ? a : undefined;
    });
    await runner.stop();
    assert.deepEqual(done.metrics, ["od_comm", "zone_od_comm", "sample_size"]);
    assert.match((await store.analyses.result(analysis.uuid, "sample_size"))!, /^data_period,day_type/);
    const job = (await store.jobs.get(analysis.jobId!))!;
    assert.deepEqual([job.state, job.attempts], ["done", 2]);
    await store.close();
  });

  it("says why it stopped computing: the analysis was cancelled, or its lease passed to another runner", async () => {
    const testCompute = new URL("../helpers/test-compute.ts", import.meta.url).href;
    const { store, clock, analysis } = await setup("hang-lease-lost", testCompute);
    const lines: string[] = [];
    const runner = new JobRunner({
      store,
      queue: store.jobs,
      workerStore: { kind: "sqlite", file: store.file },
      workerModule: ANALYSIS_WORKER,
      computeModule: testCompute,
      pollMs: 10,
      leaseMs: 1000,
      log: (line) => lines.push(line),
    });
    const halfway = (uuid: string) =>
      until(async () => ((await store.analyses.getByUuid(uuid))!.progress === 0.5 ? true : undefined));
    const stopped = (uuid: string) => until(async () => lines.find((l) => l.includes(`(${uuid}) stopped:`)));
    await runner.start();
    try {
      await halfway(analysis.uuid);
      clock.now += 1001; // the runner's lease runs out before its next heartbeat: another takes the job
      assert.ok(await store.jobs.claim("other-runner", 60_000));
      assert.match(
        await stopped(analysis.uuid),
        /stopped: its lease ended and another worker took the job over$/,
      );
      const cancelled = await createAnalysis(store, {
        ...analysis.spec,
        uuid: crypto.randomUUID(),
        name: "hang-cancel",
      });
      await halfway(cancelled.uuid);
      await cancelAnalysis(store, analysis.spec.orgId, cancelled.uuid);
      assert.match(await stopped(cancelled.uuid), /stopped: cancelled$/);
    } finally {
      await runner.stop();
      await store.close();
    }
  });

  it("fails an analysis interrupted more than maxAttempts times, with a reason", async () => {
    const { store, clock, analysis, runner } = await setup("interrupted");
    for (let i = 0; i < 3; i++) {
      await store.jobs.claim(`crash-${i}`, 1000);
      clock.now += 1001;
    }
    await runner.start();
    const failed = await until(async () => {
      const a = (await store.analyses.getByUuid(analysis.uuid))!;
      return a.state === "failed" ? a : undefined;
    });
    await runner.stop();
    assert.equal(failed.failureReason, "the analysis was interrupted 3 times while running; create it again");
    assert.equal((await store.jobs.get(analysis.jobId!))!.state, "failed");
    await store.close();
  });

  it("hands a running job back to the queue when stopped, so the next runner starts it at once", async () => {
    const testCompute = new URL("../helpers/test-compute.ts", import.meta.url).href;
    // test-compute never finishes an analysis whose name starts with "hang".
    const { store, analysis, runner } = await setup("hang-on-stop", testCompute);
    await runner.start();
    await until(async () =>
      (await store.analyses.getByUuid(analysis.uuid))!.progress === 0.5 ? true : undefined,
    );
    await runner.stop();
    const job = (await store.jobs.get(analysis.jobId!))!;
    assert.deepEqual([job.state, job.attempts, job.leaseOwner], ["queued", 0, null]);
    // No clock advance: the job is claimable now, not after its lease would have run out.
    assert.equal((await store.jobs.claim("next-runner", 1000))!.id, analysis.jobId);
    await store.close();
  });

  /** A promise and the function that resolves it. */
  const signal = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it("hands back a job whose claim answers while it stops, before the stop resolves", async () => {
    const { store, analysis } = await setup("claimed-while-stopping");
    const claimed = signal();
    const answer = signal();
    const queue = {
      ...store.jobs,
      claim: async (workerId: string, leaseMs: number) => {
        const job = await store.jobs.claim(workerId, leaseMs);
        if (job) {
          claimed.resolve();
          await answer.promise;
        }
        return job;
      },
    };
    const runner = new JobRunner({
      store,
      queue,
      workerStore: { kind: "sqlite", file: store.file },
      workerModule: ANALYSIS_WORKER,
      pollMs: 10,
      leaseMs: 60_000,
    });
    await runner.start();
    await claimed.promise;
    const stopped = runner.stop();
    answer.resolve();
    await stopped;
    // Before, the stop resolved first and the process exited holding the lease (or ran the job whole).
    const job = (await store.jobs.get(analysis.jobId!))!;
    assert.deepEqual([job.state, job.attempts, job.leaseOwner], ["queued", 0, null]);
    await store.close();
  });

  it("stopped while it prepares a job, hands it back without computing it", async () => {
    const { store, analysis } = await setup("stopped-while-preparing");
    const preparing = signal();
    const go = signal();
    const bound = (target: object, key: string | symbol): unknown => {
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    };
    const analyses = new Proxy(store.analyses, {
      get: (target, key) =>
        key === "markRunning"
          ? async (uuid: string) => {
              preparing.resolve();
              await go.promise;
              return await target.markRunning(uuid);
            }
          : bound(target, key),
    });
    const runner = new JobRunner({
      store: new Proxy(store, { get: (target, key) => (key === "analyses" ? analyses : bound(target, key)) }),
      queue: store.jobs,
      workerStore: { kind: "sqlite", file: store.file },
      workerModule: ANALYSIS_WORKER,
      pollMs: 10,
      leaseMs: 60_000,
    });
    await runner.start();
    await preparing.promise;
    const stopped = runner.stop();
    go.resolve();
    await stopped;
    // Before, the stop ended the idle thread, the job started a new one and the stop waited for the
    // whole computation (forever for one that hangs).
    assert.notEqual((await store.analyses.getByUuid(analysis.uuid))!.state, "done");
    const job = (await store.jobs.get(analysis.jobId!))!;
    assert.deepEqual([job.state, job.attempts, job.leaseOwner], ["queued", 0, null]);
    await store.close();
  });

  it("runs two analyses side by side with two runners on one queue, each job once", async () => {
    const testCompute = new URL("../helpers/test-compute.ts", import.meta.url).href;
    const { store, analysis, runner } = await setup("hang-first", testCompute);
    const second = await createAnalysis(store, {
      ...analysis.spec,
      uuid: crypto.randomUUID(),
      name: "hang-second",
    });
    const other = new JobRunner({
      store,
      queue: store.jobs,
      workerStore: { kind: "sqlite", file: store.file },
      workerModule: ANALYSIS_WORKER,
      pollMs: 10,
      computeModule: testCompute,
    });
    await runner.start();
    await other.start();
    const progress = async (uuid: string) => (await store.analyses.getByUuid(uuid))!.progress;
    // Both hang at half progress: they can only both get there if they run at the same time.
    await until(async () =>
      (await progress(analysis.uuid)) === 0.5 && (await progress(second.uuid)) === 0.5 ? true : undefined,
    );
    const owners = await Promise.all(
      [analysis, second].map(async (a) => (await store.jobs.get(a.jobId!))!.leaseOwner),
    );
    assert.notEqual(owners[0], owners[1]);
    await Promise.all([runner.stop(), other.stop()]);
    await store.close();
  });

  it("keeps its worker thread warm across jobs, and replaces the thread of a cancelled one", async () => {
    const threadCompute = new URL("../helpers/thread-compute.ts", import.meta.url).href;
    const { store, analysis, runner } = await setup("warm-first", threadCompute);
    const another = (name: string) =>
      createAnalysis(store, { ...analysis.spec, uuid: crypto.randomUUID(), name });
    const threadOf = async (uuid: string) =>
      await until(async () => {
        const a = (await store.analyses.getByUuid(uuid))!;
        return a.state === "done" ? ((await store.analyses.result(uuid, "thread")) ?? "") : undefined;
      });
    await runner.start();
    const first = await threadOf(analysis.uuid);
    const second = await threadOf((await another("warm-second")).uuid);
    assert.equal(second, first, "the second job ran in the first one's thread");
    const hanging = await another("hang-cancelled");
    await until(async () =>
      (await store.analyses.getByUuid(hanging.uuid))!.progress === 0.5 ? true : undefined,
    );
    await cancelAnalysis(store, analysis.spec.orgId, hanging.uuid);
    const afterCancel = await threadOf((await another("warm-after-cancel")).uuid);
    assert.notEqual(afterCancel, first, "the cancelled job's thread was terminated; a new one runs the next");
    await runner.stop();
    await store.close();
  });
});
