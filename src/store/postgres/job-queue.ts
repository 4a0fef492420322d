import type { Job, JobQueue } from "../../app/ports/job-queue.js";
import { numbered, type PgDb } from "./db.js";
import { toJob, type JobRow } from "../rows.js";

const JOB_COLUMNS =
  "id, kind, payload, state, attempts, lease_owner, lease_expires_at, failure_reason, created_at, updated_at, priority";

/**
 * The job queue in the PostgreSQL store (the same leases as the SQLite queue), so creating an analysis
 * and its job stays one transaction. Claims take `FOR UPDATE SKIP LOCKED`: workers in any number of
 * processes each get a different job without waiting on one another.
 */
export class PostgresJobQueue implements JobQueue {
  constructor(
    private readonly db: PgDb,
    private readonly clock: () => number = Date.now,
  ) {}

  async enqueue(kind: string, payload: unknown, options: { priority?: number } = {}): Promise<Job> {
    const t = this.clock();
    const row = await this.db.row<JobRow>(
      `INSERT INTO jobs (id, kind, payload, state, created_at, updated_at, priority)
       VALUES ($1, $2, $3, 'queued', $4, $4, $5) RETURNING ${JOB_COLUMNS}`,
      [crypto.randomUUID(), kind, JSON.stringify(payload ?? null), t, options.priority ?? 0],
    );
    return toJob(row!);
  }

  async claim(workerId: string, leaseMs: number): Promise<Job | null> {
    const t = this.clock();
    const row = await this.db.row<JobRow>(
      `UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_owner = $1, lease_expires_at = $2,
         updated_at = $3
       WHERE id = (SELECT id FROM jobs WHERE state = 'queued' OR (state = 'running' AND lease_expires_at < $3)
                   ORDER BY priority DESC, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING ${JOB_COLUMNS}`,
      [workerId, t + leaseMs, t],
    );
    return row ? toJob(row) : null;
  }

  heartbeat(jobId: string, workerId: string, leaseMs: number): Promise<boolean> {
    const t = this.clock();
    return this.updateOwned(jobId, workerId, "lease_expires_at = $, updated_at = $", t + leaseMs, t);
  }

  complete(jobId: string, workerId: string): Promise<boolean> {
    const set = "state = 'done', lease_expires_at = NULL, updated_at = $";
    return this.updateOwned(jobId, workerId, set, this.clock());
  }

  fail(jobId: string, workerId: string, reason: string): Promise<boolean> {
    const set = "state = 'failed', failure_reason = $, lease_expires_at = NULL, updated_at = $";
    return this.updateOwned(jobId, workerId, set, reason, this.clock());
  }

  release(jobId: string, workerId: string): Promise<boolean> {
    const set = `state = 'queued', attempts = GREATEST(attempts - 1, 0), lease_owner = NULL,
      lease_expires_at = NULL, updated_at = $`;
    return this.updateOwned(jobId, workerId, set, this.clock());
  }

  async expireLeases(isGone: (leaseOwner: string) => boolean): Promise<Job[]> {
    const running = await this.db.rows<{ id: string; lease_owner: string }>(
      "SELECT id, lease_owner FROM jobs WHERE state = 'running' AND lease_owner IS NOT NULL",
    );
    const gone = running.filter((r) => isGone(r.lease_owner));
    if (gone.length === 0) return [];
    const t = this.clock();
    // Expired "now": claim takes leases that ended before its clock reading, so one ms back. Only jobs
    // still held by the same owner: one claimed again meanwhile keeps its new lease.
    const rows = await this.db.rows<JobRow>(
      `UPDATE jobs j SET lease_expires_at = $1, updated_at = $2
       FROM unnest($3::text[], $4::text[]) AS g(id, owner)
       WHERE j.id = g.id AND j.state = 'running' AND j.lease_owner = g.owner
       RETURNING ${JOB_COLUMNS.split(", ")
         .map((c) => `j.${c}`)
         .join(", ")}`,
      [t - 1, t, gone.map((r) => r.id), gone.map((r) => r.lease_owner)],
    );
    return rows.map(toJob);
  }

  async cancel(jobId: string): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE jobs SET state = 'cancelled', lease_expires_at = NULL, updated_at = $1
       WHERE id = $2 AND state IN ('queued', 'running')`,
      [this.clock(), jobId],
    );
    return changed === 1;
  }

  async get(jobId: string): Promise<Job | null> {
    const row = await this.db.row<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [jobId]);
    return row ? toJob(row) : null;
  }

  /** Updates a job only while it is running under this worker's lease (`$` in `set` numbered in order). */
  private async updateOwned(jobId: string, workerId: string, set: string, ...values: unknown[]) {
    const { sql: assignments, next } = numbered(set);
    const sql = `UPDATE jobs SET ${assignments} WHERE id = $${next} AND state = 'running' AND lease_owner = $${next + 1}`;
    return (await this.db.run(sql, [...values, jobId, workerId])) === 1;
  }
}
