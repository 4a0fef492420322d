import type Database from "better-sqlite3";
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { NameTakenError, type AnalysisRepo, type ResultPiece } from "../../app/ports/store.js";
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

  complete(uuid: string, results: Record<string, string>, options: { keepPieces?: boolean } = {}): boolean {
    return this.db.transaction(() => {
      // Results named `_…` (the coverage review) are stored but are not downloadable metrics.
      const metrics = JSON.stringify(Object.keys(results).filter((name) => !name.startsWith("_")));
      const set = "state = 'done', progress = 1, metrics = ?, finished_at = ?";
      if (!this.transition(uuid, ["running"], set, metrics, now())) return false;
      this.dropResults(uuid, !options.keepPieces);
      const insert = this.db.prepare(
        "INSERT INTO analysis_results (analysis_uuid, metric, csv) VALUES (?, ?, ?)",
      );
      for (const [metric, csv] of Object.entries(results)) insert.run(uuid, metric, csv);
      return true;
    })();
  }

  putResultPieces(uuid: string, pieces: readonly ResultPiece[]): boolean {
    return this.db.transaction(() => {
      if (!this.db.prepare("SELECT 1 FROM analyses WHERE uuid = ? AND state = 'running'").get(uuid))
        return false;
      const put = this.db.prepare(
        "INSERT OR REPLACE INTO analysis_result_pieces (analysis_uuid, metric, piece, csv) VALUES (?, ?, ?, ?)",
      );
      // Kept as TEXT: bytes bound as they are would be a BLOB, read back as bytes.
      for (const { metric, piece, csv } of pieces)
        put.run(uuid, metric, piece, typeof csv === "string" ? csv : Buffer.from(csv).toString("utf8"));
      return true;
    })();
  }

  fail(uuid: string, reason: string): boolean {
    const set = "state = 'failed', failure_reason = ?, finished_at = ?";
    return this.endWithoutResults(uuid, ["queued", "running"], set, reason, now());
  }

  cancel(uuid: string): boolean {
    return this.endWithoutResults(uuid, ["queued", "running"], "state = 'cancelled', finished_at = ?", now());
  }

  markDeleted(uuid: string): boolean {
    const set = "state = 'deleted', name_key = NULL, metrics = '[]'";
    return this.endWithoutResults(uuid, ["done", "failed", "cancelled"], set);
  }

  result(uuid: string, metric: string): string | null {
    const row = this.db
      .prepare("SELECT csv FROM analysis_results WHERE analysis_uuid = ? AND metric = ?")
      .get(uuid, metric) as { csv: string } | undefined;
    if (!row) return null;
    const pieces = this.db
      .prepare("SELECT csv FROM analysis_result_pieces WHERE analysis_uuid = ? AND metric = ? ORDER BY piece")
      .pluck()
      .all(uuid, metric) as string[];
    return pieces.length === 0 ? row.csv : [row.csv, ...pieces].join("");
  }

  /** A transition that leaves no results (failed, cancelled, deleted): what was stored is dropped with it. */
  private endWithoutResults(uuid: string, from: AnalysisState[], set: string, ...values: unknown[]): boolean {
    return this.db.transaction(() => {
      if (!this.transition(uuid, from, set, ...values)) return false;
      this.dropResults(uuid, true);
      return true;
    })();
  }

  /** The stored results of an analysis, and its pieces with `pieces`. */
  private dropResults(uuid: string, pieces: boolean): void {
    this.db.prepare("DELETE FROM analysis_results WHERE analysis_uuid = ?").run(uuid);
    if (pieces) this.db.prepare("DELETE FROM analysis_result_pieces WHERE analysis_uuid = ?").run(uuid);
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
