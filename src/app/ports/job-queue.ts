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

export interface JobQueue {
  /** `priority` (default 0): higher runs first; equal priorities run oldest first. */
  enqueue(kind: string, payload: unknown, options?: { priority?: number }): Promise<Job>;
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
