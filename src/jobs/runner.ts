import { Worker } from "node:worker_threads";
import type { Store } from "../app/ports/store.js";
import type { StoredAnalysis } from "../domain/records.js";
import { ANALYSIS_JOB, type AnalysisJobPayload } from "../app/analyses/lifecycle.js";
import { isDeadLocalOwner, leaseOwnerId } from "./lease-owner.js";
import type { Job, JobQueue } from "../app/ports/job-queue.js";
import type { WorkerInput, WorkerMessage } from "./worker.js";
import type { StoreDescription } from "../app/ports/store.js";

export interface RunnerOptions {
  /** The main thread's store: the runner alone writes statuses and results. */
  store: Store;
  queue: JobQueue;
  /** The store worker threads open (read-only for SQLite). */
  workerStore: StoreDescription;
  workerId?: string;
  leaseMs?: number;
  heartbeatMs?: number;
  pollMs?: number;
  /** A job claimed more often than this was interrupted repeatedly and is failed. */
  maxAttempts?: number;
  /** Module exporting `computeAnalysis`; defaults to ./compute. Tests inject their own. */
  computeModule?: string;
  log?: (line: string) => void;
  /** Called once an analysis is Data Available or Failed (the completion webhook); errors are logged. */
  onFinished?: (analysis: StoredAnalysis) => void | Promise<void>;
}

/** How a worker run ended: its result, an error, or `lost` when the job was cancelled (or taken over). */
type WorkerOutcome = Extract<WorkerMessage, { type: "result" | "error" }> | { type: "lost" };

// Under tsx (tests, `npm run streetflow`) modules are .ts files and workers need tsx registered too.
const RUNNING_TS = import.meta.url.endsWith(".ts");
const moduleUrl = (path: string) => new URL(`${path}${RUNNING_TS ? ".ts" : ".js"}`, import.meta.url);
const sibling = (name: string) => moduleUrl(`./${name}`);

/**
 * Starts the worker thread. From dist it is plain worker.js; under tsx the
 * `--import tsx` flag does not reach worker threads on Node 20, so a small
 * script registers tsx's loader in the thread before importing worker.ts.
 */
function startWorker(input: WorkerInput): Worker {
  if (!RUNNING_TS) return new Worker(sibling("worker"), { workerData: input });
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(sibling("worker").href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: input });
}

/**
 * Polls the queue and runs analysis jobs one at a time, each in a worker
 * thread so a long computation never blocks the HTTP server. It renews the
 * job's lease while the worker runs; a failed renewal means the job was
 * cancelled (or taken over), and the worker is terminated.
 */
export class JobRunner {
  private readonly o: Required<Omit<RunnerOptions, "log" | "onFinished">> & {
    log: (line: string) => void;
    onFinished: NonNullable<RunnerOptions["onFinished"]>;
  };
  private timer: NodeJS.Timeout | null = null;
  private current: Worker | null = null;
  /** The job being run by the current tick, if any. */
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(options: RunnerOptions) {
    const leaseMs = options.leaseMs ?? 60_000;
    this.o = {
      workerId: leaseOwnerId(),
      heartbeatMs: Math.max(10, Math.floor(leaseMs / 3)),
      pollMs: 1000,
      maxAttempts: 3,
      computeModule: moduleUrl("../app/analyses/compute").href,
      log: () => {},
      onFinished: () => {},
      ...options,
      leaseMs,
    };
  }

  /** Starts polling, first taking back the jobs of dead processes of this host (see lease-owner.ts). */
  async start(): Promise<this> {
    this.stopping = false;
    await this.reclaimDeadLeases();
    this.schedule(0);
    return this;
  }

  private async reclaimDeadLeases(): Promise<void> {
    try {
      for (const job of await this.o.queue.expireLeases((owner) => isDeadLocalOwner(owner)))
        this.o.log(`job ${job.id}: its lease holder ${job.leaseOwner} is no longer running; taking it back`);
    } catch (e) {
      this.o.log(`job runner: reclaiming leases failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Stops polling and terminates a running worker; its job goes back to the queue for a later start. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current?.terminate();
    // The job's own ending (handing it back to the queue) runs before stop resolves; tick logs its errors.
    await this.running?.catch(() => {});
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    let ran = false;
    try {
      const job = await this.o.queue.claim(this.o.workerId, this.o.leaseMs);
      if (job) {
        ran = true;
        this.running = this.runJob(job);
        await this.running;
      }
    } catch (e) {
      this.o.log(`job runner: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.running = null;
    }
    // Look again at once after a job: more may be waiting.
    this.schedule(ran ? 0 : this.o.pollMs);
  }

  private async runJob(job: Job): Promise<void> {
    const { store, queue, workerId } = this.o;
    const uuid = (job.payload as AnalysisJobPayload).analysisUuid;
    const analysis = job.kind === ANALYSIS_JOB ? await store.analyses.getByUuid(uuid) : null;
    // Nothing (left) to do: unknown kind, cancelled meanwhile, or a job the analysis no longer counts on
    // (requeueOrphans gave it another).
    const superseded = analysis?.jobId != null && analysis.jobId !== job.id;
    if (!analysis || !["queued", "running"].includes(analysis.state) || superseded) {
      await queue.complete(job.id, workerId);
      return;
    }
    if (job.attempts > this.o.maxAttempts) {
      const reason = `the analysis was interrupted ${job.attempts - 1} times while running; create it again`;
      await store.analyses.fail(uuid, reason);
      await queue.fail(job.id, workerId, reason);
      return;
    }
    await store.analyses.markRunning(uuid);
    this.o.log(`analysis ${analysis.name} (${uuid}) started, attempt ${job.attempts}`);
    const outcome = await this.runWorker(job, {
      store: this.o.workerStore,
      spec: analysis.spec,
      computeModule: this.o.computeModule,
    });
    if (this.stopping && outcome.type !== "result") {
      // Shutting down mid-run: the job goes back to the queue for the next runner, without waiting for
      // the lease to expire and without counting as an interrupted attempt.
      await queue.release(job.id, workerId);
      this.o.log(`analysis ${analysis.name} (${uuid}) handed back to the queue (shutting down)`);
      return;
    }
    if (outcome.type === "result") {
      await store.transaction(async () => {
        if (await store.analyses.complete(uuid, outcome.results)) await queue.complete(job.id, workerId);
      });
    } else if (outcome.type === "error") {
      await store.transaction(async () => {
        await store.analyses.fail(uuid, outcome.message);
        await queue.fail(job.id, workerId, outcome.message);
      });
    }
    const ending = { result: "finished", error: "failed", lost: "stopped: cancelled" }[outcome.type];
    this.o.log(`analysis ${analysis.name} (${uuid}) ${ending}`);
    const finished = await store.analyses.getByUuid(uuid);
    if (finished && (finished.state === "done" || finished.state === "failed"))
      await Promise.resolve(this.o.onFinished(finished)).catch((e: unknown) =>
        this.o.log(`analysis ${analysis.name} (${uuid}): completion hook failed: ${(e as Error).message}`),
      );
  }

  /** Runs the worker to its exit and reports how it ended. */
  private runWorker(job: Job, input: WorkerInput): Promise<WorkerOutcome> {
    const { store, queue, workerId, leaseMs, heartbeatMs } = this.o;
    const worker = startWorker(input);
    let settle: (v: WorkerOutcome) => void = () => {};
    const outcome = new Promise<WorkerOutcome>((resolve) => (settle = resolve));
    // The first word wins: a result posted before a crash still counts, a cancel beats the exit it causes.
    let finished: WorkerOutcome | null = null;
    const finish = (v: WorkerOutcome) => (finished ??= v);

    const logFailure = (what: string) => (e: unknown) =>
      this.o.log(`job ${job.id}: ${what} failed: ${e instanceof Error ? e.message : String(e)}`);
    const heartbeat = setInterval(() => {
      queue.heartbeat(job.id, workerId, leaseMs).then((held) => {
        if (held) return;
        finish({ type: "lost" });
        void worker.terminate();
      }, logFailure("heartbeat"));
    }, heartbeatMs);
    worker.on("message", (m: WorkerMessage) => {
      if (m.type === "progress")
        store.analyses.setProgress(input.spec.uuid, m.progress).catch(logFailure("progress"));
      else finish(m);
    });
    worker.on("error", (e) => finish({ type: "error", message: `the computation failed: ${e.message}` }));
    worker.on("exit", (code) => {
      clearInterval(heartbeat);
      settle(finish({ type: "error", message: `the computation stopped unexpectedly (exit code ${code})` }));
    });
    this.current = worker;
    return outcome.finally(() => (this.current = null));
  }
}
