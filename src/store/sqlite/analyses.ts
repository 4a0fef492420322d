import type Database from "better-sqlite3";
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { NameTakenError, type AnalysisRepo } from "../../app/ports/store.js";
import { type AnalysisState, type StoredAnalysis } from "../../domain/records.js";
import type { Sync } from "./async-port.js";
import { toAnalysis, type AnalysisRow } from "../rows.js";

const now = () => new Date().toISOString();
const nameKey = (name: string) => name.trim().toLowerCase();

export class SqliteAnalyses implements Sync<AnalysisRepo> {
  constructor(private readonly db: Database.Database) {}

  create({ spec, jobId }: { spec: AnalysisSpec; jobId: string | null }): StoredAnalysis {
    try {
      this.db
        .prepare(
          `INSERT INTO analyses (uuid, org_id, name, name_lookup, name_key, spec, state, job_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
        )
        .run(
          spec.uuid,
          spec.orgId,
          spec.name,
          nameKey(spec.name),
          nameKey(spec.name),
          JSON.stringify(spec),
          jobId,
          now(),
        );
    } catch (e) {
      if (e instanceof Error && "code" in e && String(e.code).startsWith("SQLITE_CONSTRAINT_UNIQUE"))
        throw new NameTakenError("analysis", spec.name);
      throw e;
    }
    return this.getByUuid(spec.uuid)!;
  }

  get(orgId: string, nameOrUuid: string): StoredAnalysis | null {
    const row = this.db
      .prepare(
        `SELECT * FROM analyses WHERE org_id = ? AND (uuid = ? OR name_lookup = ?)
         ORDER BY uuid = ? DESC, name_key IS NULL, created_at DESC LIMIT 1`,
      )
      .get(orgId, nameOrUuid, nameKey(nameOrUuid), nameOrUuid) as AnalysisRow | undefined;
    return row ? toAnalysis(row) : null;
  }

  getByUuid(uuid: string): StoredAnalysis | null {
    const row = this.db.prepare("SELECT * FROM analyses WHERE uuid = ?").get(uuid) as AnalysisRow | undefined;
    return row ? toAnalysis(row) : null;
  }

  list(orgId: string): StoredAnalysis[] {
    const rows = this.db
      .prepare("SELECT * FROM analyses WHERE org_id = ? ORDER BY created_at DESC, name")
      .all(orgId) as AnalysisRow[];
    return rows.map(toAnalysis);
  }

  markRunning(uuid: string): boolean {
    return this.transition(
      uuid,
      ["queued", "running"],
      "state = 'running', progress = 0, started_at = ?",
      now(),
    );
  }

  setProgress(uuid: string, progress: number): void {
    this.transition(uuid, ["running"], "progress = ?", Math.max(0, Math.min(1, progress)));
  }

  complete(uuid: string, results: Record<string, string>): boolean {
    return this.db.transaction(() => {
      // Results named `_…` (the coverage review) are stored but are not downloadable metrics.
      const metrics = JSON.stringify(Object.keys(results).filter((name) => !name.startsWith("_")));
      const set = "state = 'done', progress = 1, metrics = ?, finished_at = ?";
      if (!this.transition(uuid, ["running"], set, metrics, now())) return false;
      this.db.prepare("DELETE FROM analysis_results WHERE analysis_uuid = ?").run(uuid);
      const insert = this.db.prepare(
        "INSERT INTO analysis_results (analysis_uuid, metric, csv) VALUES (?, ?, ?)",
      );
      for (const [metric, csv] of Object.entries(results)) insert.run(uuid, metric, csv);
      return true;
    })();
  }

  fail(uuid: string, reason: string): boolean {
    return this.transition(
      uuid,
      ["queued", "running"],
      "state = 'failed', failure_reason = ?, finished_at = ?",
      reason,
      now(),
    );
  }

  cancel(uuid: string): boolean {
    return this.transition(uuid, ["queued", "running"], "state = 'cancelled', finished_at = ?", now());
  }

  markDeleted(uuid: string): boolean {
    return this.db.transaction(() => {
      const set = "state = 'deleted', name_key = NULL, metrics = '[]'";
      if (!this.transition(uuid, ["done", "failed", "cancelled"], set)) return false;
      this.db.prepare("DELETE FROM analysis_results WHERE analysis_uuid = ?").run(uuid);
      return true;
    })();
  }

  result(uuid: string, metric: string): string | null {
    const row = this.db
      .prepare("SELECT csv FROM analysis_results WHERE analysis_uuid = ? AND metric = ?")
      .get(uuid, metric) as { csv: string } | undefined;
    return row?.csv ?? null;
  }

  unfinished(): StoredAnalysis[] {
    const rows = this.db
      .prepare("SELECT * FROM analyses WHERE state IN ('queued', 'running') ORDER BY created_at, uuid")
      .all() as AnalysisRow[];
    return rows.map(toAnalysis);
  }

  assignJob(uuid: string, jobId: string, expected: string | null): boolean {
    const info = this.db
      .prepare(
        `UPDATE analyses SET job_id = ? WHERE uuid = ? AND job_id IS ? AND state IN ('queued', 'running')`,
      )
      .run(jobId, uuid, expected);
    return info.changes === 1;
  }

  /** Updates the analysis only from one of the `from` states; true when it did. */
  private transition(uuid: string, from: AnalysisState[], set: string, ...values: unknown[]): boolean {
    const marks = from.map(() => "?").join(", ");
    const info = this.db
      .prepare(`UPDATE analyses SET ${set} WHERE uuid = ? AND state IN (${marks})`)
      .run(...values, uuid, ...from);
    return info.changes === 1;
  }
}
