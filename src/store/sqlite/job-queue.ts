import type Database from "better-sqlite3";
import type { Job, JobQueue } from "../../app/ports/job-queue.js";
import type { Sync } from "./async-port.js";
import { toJob, type JobRow } from "../rows.js";

/** The job queue in the service's SQLite file; `clock` is injectable so tests can expire leases. */
export class SqliteJobQueue implements Sync<JobQueue> {
  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number = Date.now,
  ) {}

  enqueue(kind: string, payload: unknown, options: { priority?: number } = {}): Job {
    const t = this.clock();
    const id = crypto.randomUUID();
    // seq keeps insertion order even when two jobs share a millisecond.
    this.db
      .prepare(
        `INSERT INTO jobs (id, seq, kind, payload, state, created_at, updated_at, priority)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs), ?, ?, 'queued', ?, ?, ?)`,
      )
      .run(id, kind, JSON.stringify(payload ?? null), t, t, options.priority ?? 0);
    return this.get(id)!;
  }

  claim(workerId: string, leaseMs: number): Job | null {
    return this.db
      .transaction(() => {
        const t = this.clock();
        const row = this.db
          .prepare(
            `SELECT id FROM jobs WHERE state = 'queued' OR (state = 'running' AND lease_expires_at < ?)
           ORDER BY priority DESC, seq LIMIT 1`,
          )
          .get(t) as { id: string } | undefined;
        if (!row) return null;
        this.db
          .prepare(
            `UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_owner = ?, lease_expires_at = ?,
           updated_at = ? WHERE id = ?`,
          )
          .run(workerId, t + leaseMs, t, row.id);
        return this.get(row.id);
      })
      .immediate();
  }

  heartbeat(jobId: string, workerId: string, leaseMs: number): boolean {
    const t = this.clock();
    return this.updateOwned(jobId, workerId, "lease_expires_at = ?, updated_at = ?", t + leaseMs, t);
  }

  complete(jobId: string, workerId: string): boolean {
    return this.updateOwned(
      jobId,
      workerId,
      "state = 'done', lease_expires_at = NULL, updated_at = ?",
      this.clock(),
    );
  }

  fail(jobId: string, workerId: string, reason: string): boolean {
    const set = "state = 'failed', failure_reason = ?, lease_expires_at = NULL, updated_at = ?";
    return this.updateOwned(jobId, workerId, set, reason, this.clock());
  }

  release(jobId: string, workerId: string): boolean {
    const set =
      "state = 'queued', attempts = MAX(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL, updated_at = ?";
    return this.updateOwned(jobId, workerId, set, this.clock());
  }

  expireLeases(isGone: (leaseOwner: string) => boolean): Job[] {
    return this.db
      .transaction(() => {
        const running = this.db
          .prepare("SELECT id, lease_owner FROM jobs WHERE state = 'running' AND lease_owner IS NOT NULL")
          .all() as { id: string; lease_owner: string }[];
        const t = this.clock();
        // Expired "now": claim takes leases that ended before its clock reading, so one ms back.
        const expire = this.db.prepare(
          "UPDATE jobs SET lease_expires_at = ?, updated_at = ? WHERE id = ? AND state = 'running' AND lease_owner = ?",
        );
        return running
          .filter((r) => isGone(r.lease_owner))
          .filter((r) => expire.run(t - 1, t, r.id, r.lease_owner).changes === 1)
          .map((r) => this.get(r.id)!);
      })
      .immediate();
  }

  cancel(jobId: string): boolean {
    const info = this.db
      .prepare(
        `UPDATE jobs SET state = 'cancelled', lease_expires_at = NULL, updated_at = ?
         WHERE id = ? AND state IN ('queued', 'running')`,
      )
      .run(this.clock(), jobId);
    return info.changes === 1;
  }

  get(jobId: string): Job | null {
    const row = this.db.prepare("SELECT * FROM jobs WHERE id = ?").get(jobId) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  /** Updates a job only while it is running under this worker's lease. */
  private updateOwned(jobId: string, workerId: string, set: string, ...values: unknown[]): boolean {
    const info = this.db
      .prepare(`UPDATE jobs SET ${set} WHERE id = ? AND state = 'running' AND lease_owner = ?`)
      .run(...values, jobId, workerId);
    return info.changes === 1;
  }
}

/**
 * `queue` (the asynchronous port) with `onEnqueue`: the embedded server's runner polls the SQLite file
 * every second, so an analysis created in the same process would wait up to that long to start. Called
 * after `enqueue` returns, maybe inside the caller's transaction: the runner's claim then waits at the
 * store's transaction gate until it commits (rolled back, the claim finds nothing and polling goes on).
 */
export function signallingEnqueues(queue: JobQueue): JobQueue {
  const listeners = new Set<() => void>();
  return {
    ...queue,
    async enqueue(kind, payload, options) {
      const job = await queue.enqueue(kind, payload, options);
      for (const listener of listeners) listener();
      return job;
    },
    onEnqueue(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
