import { Job as BullJob, FlowProducer, Queue, QueueEvents, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { ChildJob, Job, JobFlows, JobQueue, JobState, SplitOutcome } from "../../app/ports/job-queue.js";

export interface BullJobQueueOptions {
  /** redis://host:port (STREETFLOW_REDIS_URL). */
  url: string;
  /** Key prefix of every key the queue writes (default `streetflow`): several deployments may share one Redis. */
  prefix?: string;
  queueName?: string;
  /**
   * How often running jobs are checked for an ended lease (ms): a job whose worker died is back in the
   * queue between one and two intervals after its lease ran out (BullMQ's stalled-job check).
   */
  stalledCheckMs?: number;
}

/** Finished jobs (and their cancel and release marks) are kept this long, then Redis drops them. */
const KEEP_SECONDS = 7 * 24 * 3600;
/** BullMQ priorities: 1 is the highest; every job gets one so that FIFO holds among equals. */
const PRIORITY_BASE = 1000;
const MAX_BULL_PRIORITY = 2_097_152;

/** The id of a split job's child: fixed, so a second split of the same job adds nothing. */
const childId = (parentId: string, index: number) => `${parentId}-child-${index}`;

/** What BullMQ throws when a job is no longer under the given lock (finished, cancelled, taken over). */
const isLostJob = (e: unknown) =>
  e instanceof Error && /missing (lock|key)|lock mismatch|not in the active state/i.test(e.message);

/**
 * The JobQueue port on Redis with BullMQ (STREETFLOW_REDIS_URL), for workers in several processes or
 * on several hosts. The port's lease is BullMQ's job lock: `claim` takes the next job with the
 * worker's id as lock token and sets the lock to the lease; `heartbeat` extends it; BullMQ's stalled
 * check, run by every claiming process, puts a job whose lock ran out (its worker died) back into the
 * queue, where the next `claim` takes it (the attempt counts). Cancellation, which BullMQ has no state
 * for, is a mark beside the job: a queued job so marked is skipped (and failed) by `claim`, a running
 * one is failed under its lock at once, and its worker learns it from its next heartbeat.
 */
export class BullJobQueue implements JobQueue, JobFlows {
  readonly queue: Queue;
  readonly flows: JobFlows = this;
  private readonly worker: Worker;
  private readonly flowProducer: FlowProducer;
  private readonly redis: Redis;
  private stalledCheckStarted = false;
  /** Listeners of onEnqueue, and the events that call them (opened with the first listener). */
  private readonly listeners = new Set<() => void>();
  private events: { queueEvents: QueueEvents; redis: Redis } | null = null;

  constructor(private readonly options: BullJobQueueOptions) {
    // BullMQ requires maxRetriesPerRequest null: its blocking commands must wait out reconnects.
    this.redis = new Redis(options.url, { maxRetriesPerRequest: null });
    const common = { connection: this.redis, prefix: options.prefix ?? "streetflow" };
    const name = options.queueName ?? "jobs";
    this.queue = new Queue(name, {
      ...common,
      defaultJobOptions: {
        removeOnComplete: { age: KEEP_SECONDS },
        removeOnFail: { age: KEEP_SECONDS },
      },
    });
    this.flowProducer = new FlowProducer(common);
    this.worker = new Worker(name, null, {
      ...common,
      autorun: false,
      // Leases are renewed by the port's heartbeat, not by BullMQ behind the runner's back.
      skipLockRenewal: true,
      stalledInterval: options.stalledCheckMs ?? 15_000,
      // The runner decides how many interruptions are too many (its maxAttempts), not BullMQ.
      maxStalledCount: 1_000_000,
    });
  }

  async enqueue(kind: string, payload: unknown, options: { priority?: number } = {}): Promise<Job> {
    const priority = options.priority ?? 0;
    const job = await this.queue.add(kind, payload ?? null, {
      jobId: crypto.randomUUID(),
      priority: Math.min(MAX_BULL_PRIORITY, Math.max(1, PRIORITY_BASE - priority)),
    });
    return this.toJob(job, "queued");
  }

  /**
   * Calls `listener` whenever a job of this queue becomes claimable, whichever process made it so: added,
   * handed back, or a parent whose last child finished (BullMQ's "waiting" event, read on a connection of
   * its own). A worker then takes the next step of a split analysis (a shard, a merge part, the merge)
   * within milliseconds of another worker's making it, instead of at its next poll, up to a second later.
   */
  onEnqueue(listener: () => void): () => void {
    this.listeners.add(listener);
    this.events ??= this.watchWaiting();
    return () => this.listeners.delete(listener);
  }

  private watchWaiting(): { queueEvents: QueueEvents; redis: Redis } {
    // Blocking reads: this connection is not shared with the queue's commands.
    const redis = new Redis(this.options.url, { maxRetriesPerRequest: null });
    const queueEvents = new QueueEvents(this.queue.name, {
      connection: redis,
      prefix: this.queue.opts.prefix,
    });
    queueEvents.on("waiting", () => this.listeners.forEach((listener) => listener()));
    return { queueEvents, redis };
  }

  async claim(workerId: string, leaseMs: number): Promise<Job | null> {
    this.startStalledCheck();
    for (;;) {
      const job = (await this.worker.getNextJob(workerId, { block: false })) as BullJob | undefined;
      if (!job?.id) return null;
      if ((await this.isCancelled(job.id)) || (job.parent?.id && (await this.isCancelled(job.parent.id)))) {
        await this.failQuietly(job, workerId, "cancelled");
        continue;
      }
      await job.extendLock(workerId, leaseMs);
      return this.toJob(job, "running", { owner: workerId, expiresAt: Date.now() + leaseMs });
    }
  }

  async heartbeat(jobId: string, workerId: string, leaseMs: number): Promise<boolean> {
    const job = await BullJob.fromId(this.queue, jobId);
    if (!job || (await this.isCancelled(jobId))) return false;
    return (await job.extendLock(workerId, leaseMs)) === 1;
  }

  async complete(jobId: string, workerId: string): Promise<boolean> {
    const done = await this.whileOwned(jobId, (job) => job.moveToCompleted(null, workerId, false));
    if (done) await this.dropChildResults(jobId);
    return done;
  }

  async fail(jobId: string, workerId: string, reason: string): Promise<boolean> {
    const failed = await this.whileOwned(jobId, (job) =>
      job.moveToFailed(new Error(reason), workerId, false),
    );
    if (failed) await this.dropChildResults(jobId);
    return failed;
  }

  /**
   * The children are added with BullMQ's FlowProducer in one transaction, each with the parent as its
   * parent, ids `<parent>-child-<index>` (never added twice), and failParentOnFailure: a child failed
   * for good (or cancelled) fails the parent. moveToWaitingChildren then parks the parent.
   * Only the job's lock holder splits it: a runner whose lease ran out while it planned (and whose job
   * another runner took and split meanwhile) once added the merge parts while the shards still ran.
   */
  async split(
    jobId: string,
    workerId: string,
    children: readonly ChildJob[],
    after = 0,
  ): Promise<SplitOutcome> {
    const job = await BullJob.fromId(this.queue, jobId);
    if (!job || (await this.isCancelled(jobId)) || !(await this.holds(jobId, workerId))) return "lost";
    const rounds = await this.childRounds(jobId);
    if (rounds.reduce((a, b) => a + b, 0) === after && children.length > 0) {
      await this.flowProducer.addBulk(
        children.map((child, i) => ({
          name: child.kind,
          queueName: this.queue.name,
          prefix: this.queue.opts.prefix,
          data: child.payload ?? null,
          opts: {
            jobId: childId(jobId, after + i),
            priority: job.opts.priority,
            parent: { id: jobId, queue: this.queue.qualifiedName },
            failParentOnFailure: true,
            removeOnComplete: { age: KEEP_SECONDS },
            removeOnFail: { age: KEEP_SECONDS },
          },
        })),
      );
      const counts = [...rounds, children.length].join(",");
      await this.redis.set(this.mark("children", jobId), counts, "EX", KEEP_SECONDS);
    }
    // The split pass is not an attempt of the job: its merge pass should not look interrupted.
    const waiting = await this.countedOut(jobId, async () => {
      try {
        return await job.moveToWaitingChildren(workerId);
      } catch (e) {
        if (!isLostJob(e)) throw e;
        return false;
      }
    });
    if (waiting) return "waiting";
    // BullMQ answers "no pending children" without looking at the lock: the merge is ours only if held.
    return (await this.holds(jobId, workerId)) ? "done" : "lost";
  }

  async childCount(jobId: string): Promise<number> {
    return (await this.childRounds(jobId)).reduce((a, b) => a + b, 0);
  }

  /** The children mark holds each round's count, comma-separated. */
  async childRounds(jobId: string): Promise<number[]> {
    const counts = await this.redis.get(this.mark("children", jobId));
    return counts ? counts.split(",").map(Number) : [];
  }

  /**
   * The result is a hash beside the child (a field per piece), kept like finished jobs and dropped with
   * the parent's end; a merge reads only the pieces it needs (HGET).
   */
  async completeWithResult(jobId: string, workerId: string, result: readonly Uint8Array[]): Promise<boolean> {
    const job = await BullJob.fromId(this.queue, jobId);
    if (!job || (await this.isCancelled(jobId))) return false;
    const key = this.mark("result", jobId);
    const fields = result.flatMap((piece, i) => [
      String(i),
      Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength),
    ]);
    await this.redis
      .multi()
      .del(key)
      .hset(key, ...fields)
      .expire(key, KEEP_SECONDS)
      .exec();
    return this.whileOwned(jobId, (j) => j.moveToCompleted(null, workerId, false));
  }

  async childResults(jobId: string, piece = 0): Promise<(Uint8Array | null)[]> {
    const count = await this.childCount(jobId);
    if (count === 0) return [];
    const read = this.redis.pipeline();
    for (let i = 0; i < count; i++) read.hgetBuffer(this.mark("result", childId(jobId, i)), String(piece));
    const replies = (await read.exec()) ?? [];
    return replies.map(([error, bytes]) => {
      if (error) throw error;
      return (bytes as Buffer | null) ?? null;
    });
  }

  async childProgress(jobId: string): Promise<{ done: number; total: number }> {
    const total = await this.childCount(jobId);
    const job = await BullJob.fromId(this.queue, jobId);
    if (!job || total === 0) return { done: 0, total };
    const { processed = 0 } = await job.getDependenciesCount({ processed: true });
    return { done: processed, total };
  }

  async retry(jobId: string, workerId: string): Promise<boolean> {
    return this.whileOwned(jobId, (job) => job.moveToWait(workerId));
  }

  private async dropChildResults(jobId: string): Promise<void> {
    const count = await this.childCount(jobId);
    if (count > 0)
      await this.redis.del(
        ...Array.from({ length: count }, (_, i) => this.mark("result", childId(jobId, i))),
      );
  }

  async release(jobId: string, workerId: string): Promise<boolean> {
    // BullMQ counted the start; the port's attempts leave a handed-back one out.
    return this.countedOut(jobId, () => this.whileOwned(jobId, (job) => job.moveToWait(workerId)));
  }

  /**
   * Runs `move`, which takes the job out of the active state when it answers true, with the start BullMQ
   * counted left out of the port's attempts. The mark goes up before the move: a worker woken by the
   * move claims the job within milliseconds and must see the start left out already (it once read the
   * mark between the two and ran a handed-back job as its next attempt). A move that did not happen
   * takes the mark back; a claim that read it meanwhile (the lease had run out) counts one attempt short.
   */
  private async countedOut(jobId: string, move: () => Promise<boolean>): Promise<boolean> {
    await this.countReleases(jobId, 1);
    let moved = false;
    try {
      moved = await move();
    } finally {
      if (!moved) await this.countReleases(jobId, -1);
    }
    return moved;
  }

  private async countReleases(jobId: string, by: 1 | -1): Promise<void> {
    const key = this.mark("released", jobId);
    await this.redis.multi().incrby(key, by).expire(key, KEEP_SECONDS).exec();
  }

  async expireLeases(isGone: (leaseOwner: string) => boolean): Promise<Job[]> {
    const ended: Job[] = [];
    for (const job of (await this.queue.getActive()) as BullJob[]) {
      const owner = await this.lockOwner(job.id!);
      if (owner === null || !isGone(owner)) continue;
      // Back to the queue at once; the attempt the dead owner started still counts.
      try {
        await job.moveToWait(owner);
      } catch (e) {
        if (isLostJob(e)) continue;
        throw e;
      }
      ended.push(await this.toJob(job, "queued"));
    }
    return ended;
  }

  async cancel(jobId: string): Promise<boolean> {
    const job = await BullJob.fromId(this.queue, jobId);
    if (!job) return false;
    const state = await job.getState();
    if (state === "completed" || state === "failed" || state === "unknown") return false;
    const marked = await this.redis.set(this.mark("cancelled", jobId), "1", "EX", KEEP_SECONDS, "NX");
    if (marked === null) return false; // cancelled before
    // A split job's unfinished children go with it (the first to fail fails the parent for BullMQ too).
    for (let i = 0, n = await this.childCount(jobId); i < n; i++) await this.cancel(childId(jobId, i));
    if (state !== "active") return true; // claim skips it
    const owner = await this.lockOwner(jobId);
    if (owner === null) return true; // lease ran out: back in the queue soon, where claim skips it
    try {
      await job.moveToFailed(new Error("cancelled"), owner, false);
      return true;
    } catch (e) {
      if (!isLostJob(e)) throw e;
      // Finished under our feet: it was not cancelled after all.
      if (["completed", "failed"].includes(await job.getState())) {
        await this.redis.del(this.mark("cancelled", jobId));
        return false;
      }
      return true;
    }
  }

  async get(jobId: string): Promise<Job | null> {
    const job = await BullJob.fromId(this.queue, jobId);
    if (!job) return null;
    const state = await job.getState();
    if (state === "active") {
      const owner = await this.lockOwner(jobId);
      const ttl = owner === null ? 0 : await this.redis.pttl(this.lockKey(jobId));
      return this.toJob(job, "running", { owner, expiresAt: Date.now() + Math.max(0, ttl) });
    }
    return this.toJob(job, state === "completed" ? "done" : state === "failed" ? "failed" : "queued");
  }

  /** Stops taking jobs and closes the connections (jobs under way keep their leases until they end). */
  async close(): Promise<void> {
    await this.closeEvents();
    await this.worker.close();
    await this.flowProducer.close();
    await this.queue.close();
    this.redis.disconnect();
  }

  /** Every key of this queue, and the queue itself, removed (tests). */
  async destroy(): Promise<void> {
    await this.closeEvents();
    await this.queue.obliterate({ force: true });
    await this.worker.close();
    await this.flowProducer.close();
    await this.queue.close();
    // Closing writes the queue's meta key again: delete what is left only now.
    const pattern = `${this.queue.toKey("")}*`;
    for (let cursor = "0"; ;) {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
      if (keys.length > 0) await this.redis.del(...keys);
      if ((cursor = next) === "0") break;
    }
    this.redis.disconnect();
  }

  private async closeEvents(): Promise<void> {
    const events = this.events;
    this.events = null;
    this.listeners.clear();
    await events?.queueEvents.close();
    events?.redis.disconnect();
  }

  private startStalledCheck(): void {
    if (this.stalledCheckStarted) return;
    this.stalledCheckStarted = true;
    void this.worker.startStalledCheckTimer();
  }

  /** Runs `move` under the worker's lock; false when the job is not (or no longer) under it. */
  private async whileOwned(jobId: string, move: (job: BullJob) => Promise<unknown>): Promise<boolean> {
    const job = await BullJob.fromId(this.queue, jobId);
    if (!job || (await this.isCancelled(jobId))) return false;
    try {
      await move(job);
      return true;
    } catch (e) {
      if (isLostJob(e)) return false;
      throw e;
    }
  }

  private async failQuietly(job: BullJob, token: string, reason: string): Promise<void> {
    try {
      await job.moveToFailed(new Error(reason), token, false);
    } catch (e) {
      if (!isLostJob(e)) throw e;
    }
  }

  private async toJob(
    job: BullJob,
    state: Exclude<JobState, "cancelled">,
    lease: { owner: string | null; expiresAt: number } = { owner: null, expiresAt: 0 },
  ): Promise<Job> {
    const id = job.id!;
    const [cancelled, released] = await Promise.all([
      this.isCancelled(id),
      this.redis.get(this.mark("released", id)),
    ]);
    const running = state === "running" && !cancelled;
    return {
      id,
      kind: job.name,
      payload: job.data,
      state: cancelled && state !== "done" ? "cancelled" : state,
      attempts: Math.max(0, (job.attemptsStarted ?? 0) - Number(released ?? 0)),
      leaseOwner: running ? lease.owner : null,
      leaseExpiresAt: running ? lease.expiresAt : null,
      failureReason: state === "failed" && !cancelled ? (job.failedReason ?? null) : null,
      createdAt: job.timestamp,
      updatedAt: Math.max(job.timestamp, job.processedOn ?? 0, job.finishedOn ?? 0),
      priority: PRIORITY_BASE - (job.opts.priority ?? PRIORITY_BASE),
    };
  }

  private lockKey(jobId: string): string {
    return `${this.queue.toKey(jobId)}:lock`;
  }

  private lockOwner(jobId: string): Promise<string | null> {
    return this.redis.get(this.lockKey(jobId));
  }

  private async holds(jobId: string, workerId: string): Promise<boolean> {
    return (await this.lockOwner(jobId)) === workerId;
  }

  private mark(kind: "cancelled" | "released" | "children" | "result", jobId: string): string {
    return `${this.queue.toKey(jobId)}:sf-${kind}`;
  }

  private async isCancelled(jobId: string): Promise<boolean> {
    return (await this.redis.exists(this.mark("cancelled", jobId))) === 1;
  }
}
