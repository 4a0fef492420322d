import type { Store } from "../app/ports/store.js";
import type { StoredAnalysis } from "../domain/records.js";
import { ANALYSIS_JOB, type AnalysisJobPayload } from "../app/analyses/lifecycle.js";
import { isDeadLocalOwner, leaseOwnerId } from "./lease-owner.js";
import type { ChildJob, Job, JobFlows, JobQueue } from "../app/ports/job-queue.js";
import type { WorkerInput, WorkerTask } from "./analysis-thread.js";
import { WarmThread, type TaskEnd } from "./warm-thread.js";
import {
  DEFAULT_MERGE_PARTS,
  DEFAULT_SHARD_TRIPS,
  MERGE_PART_JOB,
  mergePartPieces,
  mergePartsOf,
  PARTS_STORED,
  piecesOfMergePart,
  planShards,
  SHARD_JOB,
  SHARD_PIECES,
  type ShardPieces,
  type MergePartJobPayload,
  type ShardJobPayload,
} from "../app/analyses/shards.js";
import type { StoreDescription } from "../app/ports/store.js";
import { INGEST_CHUNK_JOB } from "../app/ingest-chunk.js";
import type { IngestChunkJobs } from "./ingest-chunk-job.js";

export interface RunnerOptions {
  /** The main thread's store: the runner alone writes statuses and results. */
  store: Store;
  queue: JobQueue;
  /** The store worker threads open (read-only for SQLite). */
  workerStore: StoreDescription;
  /**
   * URL of the worker thread's entry, which opens `workerStore` and calls runAnalysisInThread: the
   * composition root's ANALYSIS_WORKER (src/main/runtime.ts).
   */
  workerModule: string;
  workerId?: string;
  leaseMs?: number;
  heartbeatMs?: number;
  pollMs?: number;
  /** A job claimed more often than this was interrupted repeatedly and is failed. */
  maxAttempts?: number;
  /** Module exporting `computeAnalysis`; defaults to ./compute. Tests inject their own. */
  computeModule?: string;
  /**
   * With a queue that has flows (Redis): trips per analysis shard, each shard a child job any runner
   * takes (see app/analyses/shards.ts); 0 runs every analysis whole.
   */
  shardTrips?: number;
  /**
   * With shards: how many merge parts (child jobs) write a sharded analysis' od_* metrics side by side
   * before its job writes the rest; 1 merges in the analysis' job alone.
   */
  mergeParts?: number;
  log?: (line: string) => void;
  /** Called once an analysis is Data Available or Failed (the completion webhook); errors are logged. */
  onFinished?: (analysis: StoredAnalysis) => void | Promise<void>;
  /** Runs the chunks of distributed ingests (issue 15); without it such a job fails. */
  ingestChunks?: IngestChunkJobs;
  /**
   * Warm the worker thread when the runner starts (store opened, compute module imported, networks
   * loaded) rather than at its first job: a worker process of a distributed deployment.
   */
  warm?: boolean;
}

/** How a worker run ended: its result, an error, or `lost` when the job was cancelled (or taken over). */
type WorkerOutcome = TaskEnd | { type: "lost" };

/** A claimed job's lease as its runner keeps it: `lost` once a renewal was refused. */
interface Lease {
  lost: boolean;
  /** The thread computes the job: a lost lease terminates it. */
  computing: boolean;
}

// The default compute module, beside this file: .ts under tsx (tests, `npm run streetflow`), else .js.
const RUNNING_TS = import.meta.url.endsWith(".ts");
const COMPUTE_MODULE = new URL(`../app/analyses/compute${RUNNING_TS ? ".ts" : ".js"}`, import.meta.url).href;

/**
 * Polls the queue (and is woken by jobs its own process enqueues) and runs analysis jobs one at a time
 * in its worker thread, so a long computation never blocks the HTTP server; the thread stays warm
 * between jobs (the shards of an analysis reuse its network and compiled zones). It renews the job's
 * lease while the thread computes; a failed renewal means the job was cancelled (or taken over), and
 * the thread is terminated.
 */
export class JobRunner {
  private readonly o: Required<Omit<RunnerOptions, "log" | "onFinished" | "ingestChunks" | "warm">> & {
    log: (line: string) => void;
    onFinished: NonNullable<RunnerOptions["onFinished"]>;
    ingestChunks?: IngestChunkJobs;
    warm?: boolean;
  };
  private timer: NodeJS.Timeout | null = null;
  private readonly thread: WarmThread;
  /** The tick under way (claiming or running a job), which stop waits for. */
  private ticked: Promise<void> | null = null;
  private stopping = false;
  /** A tick is claiming or running a job. */
  private ticking = false;
  /** A job was enqueued in this process during the tick: look again at once after it. */
  private woken = false;
  private stopWaking: (() => void) | null = null;

  constructor(options: RunnerOptions) {
    const leaseMs = options.leaseMs ?? 60_000;
    this.o = {
      workerId: leaseOwnerId(),
      heartbeatMs: Math.max(10, Math.floor(leaseMs / 3)),
      pollMs: 1000,
      maxAttempts: 3,
      computeModule: COMPUTE_MODULE,
      shardTrips: DEFAULT_SHARD_TRIPS,
      mergeParts: DEFAULT_MERGE_PARTS,
      log: () => {},
      onFinished: () => {},
      ...options,
      leaseMs,
    };
    this.thread = new WarmThread(this.o.workerModule, { store: this.o.workerStore });
  }

  /** Starts polling, first taking back the jobs of dead processes of this host (see lease-owner.ts). */
  async start(): Promise<this> {
    this.stopping = false;
    if (this.o.warm) this.thread.warm(this.o.computeModule);
    await this.reclaimDeadLeases();
    this.stopWaking = this.o.queue.onEnqueue?.(() => this.wake()) ?? null;
    this.schedule(0);
    return this;
  }

  /** A job was enqueued in this process: claim it now rather than at the next poll. */
  private wake(): void {
    if (this.stopping) return;
    if (this.ticking) {
      this.woken = true;
      return;
    }
    this.schedule(0);
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
    this.stopWaking?.();
    this.stopWaking = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.thread.terminate();
    // The tick's ending runs before stop resolves: a job being run or being claimed goes back to the
    // queue (else the process would exit holding its lease); tick catches its own errors.
    await this.ticked;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    // One timer at a time: a wake replaces the poll's.
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.ticked = this.tick();
    }, delayMs);
  }

  private async tick(): Promise<void> {
    let ran = false;
    this.ticking = true;
    this.woken = false;
    try {
      const job = await this.o.queue.claim(this.o.workerId, this.o.leaseMs);
      // Claimed while stopping: straight back to the queue, as a job stopped mid-run is.
      if (job && this.stopping) await this.o.queue.release(job.id, this.o.workerId);
      else if (job) {
        ran = true;
        await this.runJob(job);
      }
    } catch (e) {
      this.o.log(`job runner: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.ticking = false;
    }
    // Look again at once after a job, or when one was enqueued meanwhile: more may be waiting.
    this.schedule(ran || this.woken ? 0 : this.o.pollMs);
  }

  private async runJob(job: Job): Promise<void> {
    // Ingest chunks keep their own lease (ingest-chunk-job.ts).
    if (job.kind === INGEST_CHUNK_JOB) return await this.runIngestChunk(job);
    const { lease, stop } = this.keepLease(job);
    try {
      if (job.kind === SHARD_JOB || job.kind === MERGE_PART_JOB) return await this.runShard(job, lease);
      return await this.runAnalysis(job, lease);
    } finally {
      stop();
    }
  }

  /**
   * Renews the job's lease from its claim to its end, not only while the thread computes: a parent
   * that plans its shards, or a merge that reads their pieces, can outlive its lease at high load, and
   * BullMQ's stalled check then gives the job to another runner. A refused renewal marks the lease
   * lost and stops the job's computation.
   */
  private keepLease(job: Job): { lease: Lease; stop: () => void } {
    const { queue, workerId, leaseMs, heartbeatMs } = this.o;
    const lease: Lease = { lost: false, computing: false };
    const heartbeat = setInterval(() => {
      queue.heartbeat(job.id, workerId, leaseMs).then(
        (held) => {
          if (held || lease.lost) return;
          lease.lost = true;
          if (lease.computing) void this.thread.terminate();
        },
        (e: unknown) =>
          this.o.log(`job ${job.id}: heartbeat failed: ${e instanceof Error ? e.message : String(e)}`),
      );
    }, heartbeatMs);
    return { lease, stop: () => clearInterval(heartbeat) };
  }

  private async runAnalysis(job: Job, lease: Lease): Promise<void> {
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
    // Planning reads the trip index and the shards' results, seconds on a large analysis: a job that goes no
    // further than this line (its lease passed on) was lost while planning, not before it was claimed.
    if (this.shardFlows)
      this.o.log(`analysis ${analysis.name} (${uuid}) claimed, attempt ${job.attempts}: planning`);
    const task = await this.shardedTask(job, analysis);
    if ("split" in task) {
      this.o.log(`analysis ${analysis.name} (${uuid}) ${task.split}`);
      return;
    }
    if ("lost" in task) {
      this.o.log(`analysis ${analysis.name} (${uuid}) lost its job while planning; left to its holder`);
      return;
    }
    this.o.log(
      `analysis ${analysis.name} (${uuid}) ${task.type === "merge" ? "merging its shards" : "started"}, attempt ${job.attempts}`,
    );
    const outcome = await this.runWorker(lease, {
      spec: analysis.spec,
      computeModule: this.o.computeModule,
      task,
    });
    if (this.stopping && outcome.type !== "result") {
      // Shutting down mid-run: the job goes back to the queue for the next runner, without waiting for
      // the lease to expire and without counting as an interrupted attempt.
      await this.handBack(job, `analysis ${analysis.name} (${uuid})`);
      return;
    }
    let ending: string;
    if (outcome.type === "partial") {
      await this.finishFailed(job, uuid, "the computation returned partial sums for a whole analysis");
      ending = "failed";
    } else if (outcome.type === "result") {
      // A merge whose parts stored their rows as result pieces keeps them after its own results.
      const keepPieces = task.type === "merge" && task.parts === PARTS_STORED;
      const kept = await store.transaction(async () => {
        if (!(await store.analyses.complete(uuid, outcome.results, { keepPieces }))) return false;
        await queue.complete(job.id, workerId);
        return true;
      });
      ending = kept ? "finished" : `finished, not kept: ${await this.whyNotHeld(uuid)}`;
    } else if (outcome.type === "error") {
      await store.transaction(async () => {
        await store.analyses.fail(uuid, outcome.message);
        await queue.fail(job.id, workerId, outcome.message);
      });
      ending = "failed";
    } else {
      ending = `stopped: ${await this.whyNotHeld(uuid)}`;
    }
    this.o.log(`analysis ${analysis.name} (${uuid}) ${ending}`);
    await this.reportFinished(uuid);
  }

  /** Why a runner no longer holds an analysis it was computing: cancelled, or its lease passed on. */
  private async whyNotHeld(uuid: string): Promise<string> {
    const now = await this.o.store.analyses.getByUuid(uuid);
    if (!now || now.state === "cancelled") return "cancelled";
    if (now.state === "done" || now.state === "failed") return `already ${now.state} by another worker`;
    return "its lease ended and another worker took the job over";
  }

  private async reportFinished(uuid: string): Promise<void> {
    const finished = await this.o.store.analyses.getByUuid(uuid);
    if (finished && (finished.state === "done" || finished.state === "failed"))
      await Promise.resolve(this.o.onFinished(finished)).catch((e: unknown) =>
        this.o.log(`analysis ${finished.name} (${uuid}): completion hook failed: ${(e as Error).message}`),
      );
  }

  private async finishFailed(job: Job, uuid: string, reason: string): Promise<void> {
    await this.o.store.transaction(async () => {
      await this.o.store.analyses.fail(uuid, reason);
      await this.o.queue.fail(job.id, this.o.workerId, reason);
    });
  }

  /**
   * The queue's flows when analyses are split into shards (flows and a shard size): an analysis job then
   * plans (shards, merge parts, the merge) before it computes.
   */
  private get shardFlows(): JobFlows | undefined {
    return this.o.shardTrips > 0 ? this.o.queue.flows : undefined;
  }

  /**
   * What the claimed analysis job computes. With flows and a shardable analysis: on its first run the
   * job is split into one child per shard ("split": the job waits for them); once they are all done,
   * its merge is split into merge parts (children after the shards) when it has more than one; once
   * those are done too it merges the shards' partial sums with the parts' CSVs. Otherwise, and when
   * the compute module has no shard functions, whole.
   */
  private async shardedTask(
    job: Job,
    analysis: StoredAnalysis,
  ): Promise<WorkerTask | { split: string } | { lost: true }> {
    const flows = this.shardFlows;
    if (!flows) return { type: "whole" };
    const rounds = await flows.childRounds(job.id);
    let children: ChildJob[] = [];
    if (rounds.length === 0) {
      const compute = (await import(this.o.computeModule)) as Record<string, unknown>;
      if (typeof compute.computeShard !== "function" || typeof compute.mergeShards !== "function")
        return { type: "whole" };
      const shards = await planShards(analysis.spec, this.o.store, this.o.shardTrips);
      if (!shards) return { type: "whole" };
      children = shards.map((shard, index) => ({
        kind: SHARD_JOB,
        payload: { analysisUuid: analysis.uuid, parentJobId: job.id, index, total: shards.length, shard },
      }));
    }
    // A runner whose lease ran out while it planned goes no further: the job's holder splits and merges.
    const split = await flows.split(job.id, this.o.workerId, children);
    if (split === "lost") return { lost: true };
    if (split === "waiting") return { split: `split into ${await flows.childCount(job.id)} shards` };
    const results = await flows.childResults(job.id);
    // Not split after all: the whole run.
    if (results.length === 0) return { type: "whole" };
    const shards = rounds[0] ?? results.length;
    // Every shard is done before its merge is split into parts (which read them) or merged.
    present(job, results.slice(0, shards), "shard (piece 0)");
    const parts = await this.mergeParts(analysis, job, shards);
    const partsSplit = parts.length > 0 ? await flows.split(job.id, this.o.workerId, parts, shards) : "done";
    if (partsSplit === "lost") return { lost: true };
    if (partsSplit === "waiting") return { split: `merge split into ${parts.length} parts` };
    // Parts are added only after the shards are done: their results follow the shards' (third pass).
    const partResults = present(job, results.slice(shards), "merge part");
    // With parts, the shards' OD cells were theirs: only piece 0 is left to read.
    const pieces = partResults.length > 0 ? [0] : Array.from({ length: SHARD_PIECES }, (_, i) => i);
    // Parts store their rows as result pieces and leave an empty result (runShard).
    const stored = partResults.length > 0 && partResults.every((r) => r.byteLength === 0);
    return {
      type: "merge",
      partials: await this.shardPieces(job, job.id, shards, pieces, results),
      parts: stored ? PARTS_STORED : partResults.length > 0 ? partResults : undefined,
    };
  }

  /**
   * Pieces `pieces` of the first `shards` children's results (the shards'), null for the others;
   * `pieces0`: piece 0 of every child, when read already (with the merge parts' rows, ~175 MB).
   */
  private async shardPieces(
    job: Job,
    parentJobId: string,
    shards: number,
    pieces: readonly number[],
    pieces0?: (Uint8Array | null)[],
  ): Promise<ShardPieces[]> {
    const out = Array.from({ length: shards }, () => new Array<Uint8Array | null>(SHARD_PIECES).fill(null));
    for (const piece of pieces) {
      const read =
        piece === 0 && pieces0 ? pieces0 : await this.o.queue.flows!.childResults(parentJobId, piece);
      const results = read.slice(0, shards);
      present(job, results, `shard (piece ${piece})`).forEach((bytes, shard) => (out[shard][piece] = bytes));
    }
    return out;
  }

  /** The merge part children of a job with `shards` shards done: none when it merges in one job. */
  private async mergeParts(analysis: StoredAnalysis, job: Job, shards: number): Promise<ChildJob[]> {
    const compute = (await import(this.o.computeModule)) as Record<string, unknown>;
    const count = mergePartsOf(this.o.mergeParts);
    if (count <= 1 || typeof compute.computeMergePart !== "function") return [];
    return Array.from({ length: count }, (_, part) => ({
      kind: MERGE_PART_JOB,
      payload: { analysisUuid: analysis.uuid, parentJobId: job.id, part, parts: count, shards },
    }));
  }

  /**
   * One shard of an analysis: its partial sums, kept by the queue for the merge. A failed attempt is
   * retried (up to maxAttempts); the last failure fails the analysis (and, through the queue, its job).
   */
  private async runShard(job: Job, lease: Lease): Promise<void> {
    const { store, queue, workerId } = this.o;
    const flows = queue.flows!;
    const { analysisUuid: uuid, parentJobId } = job.payload as ShardJobPayload | MergePartJobPayload;
    const analysis = await store.analyses.getByUuid(uuid);
    const { label, total } = childLabel(job);
    const name = `analysis ${analysis?.name ?? "?"} (${uuid}) ${label}`;
    if (!analysis || !["queued", "running"].includes(analysis.state)) {
      await queue.fail(job.id, workerId, "the analysis is no longer running");
      return;
    }
    if (job.attempts > this.o.maxAttempts) {
      const reason = `${label} was interrupted ${job.attempts - 1} times while running; create the analysis again`;
      await this.finishFailed(job, uuid, reason);
      await this.reportFinished(uuid);
      return;
    }
    const task = await this.childTask(job);
    const outcome = await this.runWorker(lease, {
      spec: analysis.spec,
      computeModule: this.o.computeModule,
      task,
    });
    if (this.stopping && outcome.type !== "partial") {
      await this.handBack(job, name);
      return;
    }
    if (outcome.type === "partial" && job.kind === MERGE_PART_JOB) {
      // The part's od_* rows go to the store side by side with the other parts', not through Redis to
      // the merge, which then writes only the small tables; its result in the queue is empty.
      const { part, parts } = job.payload as MergePartJobPayload;
      if (!(await store.analyses.putResultPieces(uuid, mergePartPieces(outcome.partial[0], part, parts)))) {
        await queue.fail(job.id, workerId, "the analysis is no longer running");
        return;
      }
      outcome.partial = [new Uint8Array(0)];
    }
    if (outcome.type === "partial") {
      if (await flows.completeWithResult(job.id, workerId, outcome.partial)) {
        // The merge is the last step: shards bring the progress to 99 % at most.
        if (job.kind === SHARD_JOB)
          await store.analyses.setProgress(
            uuid,
            Math.min(0.99, (await flows.childProgress(parentJobId)).done / total),
          );
        this.o.log(`${name} done`);
      }
    } else if (outcome.type === "error" && job.attempts < this.o.maxAttempts) {
      await flows.retry(job.id, workerId);
      this.o.log(`${name} failed (${outcome.message}); retrying`);
    } else if (outcome.type !== "lost") {
      const message =
        outcome.type === "error" ? outcome.message : "a shard returned CSVs instead of partial sums";
      await this.finishFailed(job, uuid, message);
      this.o.log(`${name} failed: ${message}`);
      await this.reportFinished(uuid);
    }
  }

  /** Shutting down mid-run: the job goes back to the queue, unless it is no longer this runner's. */
  private async handBack(job: Job, name: string): Promise<void> {
    const released = await this.o.queue.release(job.id, this.o.workerId);
    this.o.log(
      released
        ? `${name} handed back to the queue (shutting down)`
        : `${name} not handed back: no longer held (its lease ran out, or it was cancelled)`,
    );
  }

  /** What a child job computes: its shard, or its merge part over the partial sums of every shard. */
  private async childTask(job: Job): Promise<WorkerTask> {
    if (job.kind === SHARD_JOB) return { type: "shard", shard: (job.payload as ShardJobPayload).shard };
    const { parentJobId, part, parts, shards } = job.payload as MergePartJobPayload;
    const partials = await this.shardPieces(job, parentJobId, shards, piecesOfMergePart(part, parts));
    return { type: "merge-part", partials, part, parts };
  }

  private async runIngestChunk(job: Job): Promise<void> {
    const { ingestChunks, queue, workerId } = this.o;
    if (!ingestChunks) {
      await queue.fail(job.id, workerId, "this runner takes no ingest chunks");
      return;
    }
    await ingestChunks.run(job, {
      ...this.o,
      stopping: () => this.stopping,
      handBack: (j, name) => this.handBack(j, name),
    });
  }

  /** Runs the task in the warm thread and reports how it ended; `lease` is the job's (keepLease). */
  private async runWorker(lease: Lease, input: WorkerInput): Promise<WorkerOutcome> {
    // Stopping (the thread is terminated already): the job is handed back, not started in a new thread.
    if (lease.lost || this.stopping) return { type: "lost" };
    lease.computing = true;
    try {
      const end = await this.thread.run(input, (progress) => {
        this.o.store.analyses
          .setProgress(input.spec.uuid, progress)
          .catch((e: unknown) => this.o.log(`analysis ${input.spec.uuid}: progress failed: ${String(e)}`));
      });
      // The first word wins: a cancel beats the error its termination causes.
      return lease.lost ? { type: "lost" } : end;
    } finally {
      lease.computing = false;
    }
  }
}

/** A child job's name in the log and failure reasons ("shard 2/10", "merge part 1/2"), and its round's size. */
function childLabel(job: Job): { label: string; total: number } {
  if (job.kind === SHARD_JOB) {
    const { index, total } = job.payload as ShardJobPayload;
    return { label: `shard ${index + 1}/${total}`, total };
  }
  const { part, parts } = job.payload as MergePartJobPayload;
  return { label: `merge part ${part + 1}/${parts}`, total: parts };
}

/** The children's results, every one present (a missing one is an error of the job). */
function present(job: Job, results: (Uint8Array | null)[], what: string): Uint8Array[] {
  const missing = results.findIndex((r) => r === null);
  if (missing >= 0) throw new Error(`job ${job.id}: the result of ${what} ${missing} is missing`);
  return results as Uint8Array[];
}
