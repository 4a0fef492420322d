/**
 * A durable job queue. Jobs are claimed under a lease that the worker renews
 * (heartbeat); a job whose lease runs out — its process crashed or hung — is
 * claimed again by the next worker. The SQLite implementation lives in
 * src/store/sqlite; a Redis/BullMQ one can replace it behind this interface.
 */
export type JobState = "queued" | "running" | "done" | "failed" | "cancelled";

export interface Job {
  id: string;
  kind: string;
  payload: unknown;
  state: JobState;
  /** How many times the job was claimed; above 1 it was picked up again after an interruption. */
  attempts: number;
  leaseOwner: string | null;
  /** Epoch ms. */
  leaseExpiresAt: number | null;
  failureReason: string | null;
  createdAt: number;
  updatedAt: number;
  priority: number;
}

/** A job to add as a child of another (JobFlows.split). */
export interface ChildJob {
  kind: string;
  payload: unknown;
}

/** What JobFlows.split did: parked the job, found every child done, or found the job no longer held. */
export type SplitOutcome = "waiting" | "done" | "lost";

/**
 * Parent and child jobs (BullMQ flows), for queues shared by many worker processes: a running job is
 * split into children that any runner claims like other jobs; the parent waits, and is claimed again
 * once every child is done, to merge the children's results. A child that fails for good fails its
 * parent; cancelling the parent cancels its unfinished children.
 */
export interface JobFlows {
  /**
   * Adds `children` under the running job as a new round of children (numbered on from the earlier
   * rounds'), unless the job has more than `after` children already (a runner died after splitting
   * it, and the children added then stand), and parks it until they are all done; that split does not
   * count as an attempt. `after` is the number of children of the earlier rounds (0: the first split).
   * "waiting": parked; "done": every child is done already, go on at once; "lost": the job is no longer
   * `workerId`'s (its lease ran out and another runner holds it, or it was cancelled), nothing was added
   * and the caller must leave it alone.
   */
  split(
    jobId: string,
    workerId: string,
    children: readonly ChildJob[],
    after?: number,
  ): Promise<SplitOutcome>;
  /** How many children the job was split into, over all rounds (0: not split). */
  childCount(jobId: string): Promise<number>;
  /** The number of children of each round of splits, in order ([]: not split). */
  childRounds(jobId: string): Promise<number[]>;
  /**
   * Completes a running child with its result, in pieces that are read apart (childResults); a result
   * of an earlier attempt is replaced.
   */
  completeWithResult(jobId: string, workerId: string, result: readonly Uint8Array[]): Promise<boolean>;
  /** Piece `piece` (default 0) of the children's results in child order; null where a child has none (yet). */
  childResults(jobId: string, piece?: number): Promise<(Uint8Array | null)[]>;
  /** Children done, of how many. */
  childProgress(jobId: string): Promise<{ done: number; total: number }>;
  /** Hands a running job back to the queue after a failed attempt (the attempt counts). */
  retry(jobId: string, workerId: string): Promise<boolean>;
}

export interface JobQueue {
  /** Parent and child jobs, where the queue supports them (BullMQ); absent: every job runs whole. */
  readonly flows?: JobFlows;
  /** `priority` (default 0): higher runs first; equal priorities run oldest first. */
  enqueue(kind: string, payload: unknown, options?: { priority?: number }): Promise<Job>;
  /**
   * Calls `listener` after each job this process enqueues, so a runner of the same process claims it at
   * once instead of at its next poll (jobs of other processes are still found by polling, except on a
   * queue that also hears of them: Redis calls it for every job that becomes claimable); answers the
   * function that stops the calls. Absent: polling only.
   */
  onEnqueue?(listener: () => void): () => void;
  /**
   * Atomically takes the queued job of highest priority (oldest first among equals), or a running one
   * whose lease expired; null when none.
   */
  claim(workerId: string, leaseMs: number): Promise<Job | null>;
  /** Renews the lease; false when the job is no longer this worker's to run (cancelled, reclaimed, finished). */
  heartbeat(jobId: string, workerId: string, leaseMs: number): Promise<boolean>;
  /** Each of these is false when the job is no longer running under `workerId`. */
  complete(jobId: string, workerId: string): Promise<boolean>;
  fail(jobId: string, workerId: string, reason: string): Promise<boolean>;
  /**
   * Hands a running job back to the queue at once, as if never claimed (the attempt does not count): a
   * runner shutting down cleanly, so the next runner need not wait for the lease to run out.
   */
  release(jobId: string, workerId: string): Promise<boolean>;
  /**
   * Ends at once the leases of running jobs whose owner `isGone` says is dead, so the next `claim` takes
   * them as it takes an expired lease (the attempt counts). Answers the jobs whose leases were ended.
   */
  expireLeases(isGone: (leaseOwner: string) => boolean): Promise<Job[]>;
  /** Cancels a queued or running job; false when it had already finished. */
  cancel(jobId: string): Promise<boolean>;
  get(jobId: string): Promise<Job | null>;
}
