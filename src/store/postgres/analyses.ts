import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { NameTakenError } from "../../app/ports/store.js";
import type { AnalysisRepo, NotificationRepo, ResultPiece, TagRepo } from "../../app/ports/store.js";
import type { AnalysisState, StoredAnalysis, TagSummary } from "../../domain/records.js";
import { isUniqueViolation, numbered, placeholders, type PgDb } from "./db.js";
import { toAnalysis, type AnalysisRow } from "../rows.js";

const now = () => new Date().toISOString();
const nameKey = (name: string) => name.trim().toLowerCase();

export class PostgresAnalyses implements AnalysisRepo {
  constructor(private readonly db: PgDb) {}

  async create({ spec, jobId }: { spec: AnalysisSpec; jobId: string | null }): Promise<StoredAnalysis> {
    try {
      const row = await this.db.row<AnalysisRow>(
        `INSERT INTO analyses (uuid, org_id, name, name_lookup, name_key, spec, state, job_id, created_at)
         VALUES ($1, $2, $3, $4, $4, $5, 'queued', $6, $7) RETURNING *`,
        [spec.uuid, spec.orgId, spec.name, nameKey(spec.name), JSON.stringify(spec), jobId, now()],
      );
      return toAnalysis(row!);
    } catch (e) {
      if (isUniqueViolation(e)) throw new NameTakenError("analysis", spec.name);
      throw e;
    }
  }

  async get(orgId: string, nameOrUuid: string): Promise<StoredAnalysis | null> {
    const row = await this.db.row<AnalysisRow>(
      `SELECT * FROM analyses WHERE org_id = $1 AND (uuid = $2 OR name_lookup = $3)
       ORDER BY uuid = $2 DESC, name_key IS NULL, created_at DESC LIMIT 1`,
      [orgId, nameOrUuid, nameKey(nameOrUuid)],
    );
    return row ? toAnalysis(row) : null;
  }

  async getByUuid(uuid: string): Promise<StoredAnalysis | null> {
    const row = await this.db.row<AnalysisRow>("SELECT * FROM analyses WHERE uuid = $1", [uuid]);
    return row ? toAnalysis(row) : null;
  }

  async list(orgId: string): Promise<StoredAnalysis[]> {
    const rows = await this.db.rows<AnalysisRow>(
      "SELECT * FROM analyses WHERE org_id = $1 ORDER BY created_at DESC, name",
      [orgId],
    );
    return rows.map(toAnalysis);
  }

  markRunning(uuid: string): Promise<boolean> {
    return this.transition(
      uuid,
      ["queued", "running"],
      "state = 'running', progress = 0, started_at = $",
      now(),
    );
  }

  async setProgress(uuid: string, progress: number): Promise<void> {
    await this.transition(uuid, ["running"], "progress = $", Math.max(0, Math.min(1, progress)));
  }

  complete(
    uuid: string,
    results: Record<string, string>,
    options: { keepPieces?: boolean } = {},
  ): Promise<boolean> {
    return this.db.transaction(async () => {
      // Results named `_…` (the coverage review) are stored but are not downloadable metrics.
      const metrics = JSON.stringify(Object.keys(results).filter((name) => !name.startsWith("_")));
      const set = "state = 'done', progress = 1, metrics = $, finished_at = $";
      if (!(await this.transition(uuid, ["running"], set, metrics, now()))) return false;
      await this.dropResults(uuid, !options.keepPieces);
      // A row per metric, the CSV a plain text parameter: as a text[] element (one INSERT for all) it
      // was quoted and escaped by the client and parsed back by array_in, ~175 MB of it at 1,000 zones.
      for (const [metric, csv] of Object.entries(results))
        await this.db.run("INSERT INTO analysis_results (analysis_uuid, metric, csv) VALUES ($1, $2, $3)", [
          uuid,
          metric,
          csv,
        ]);
      return true;
    });
  }

  async putResultPieces(uuid: string, pieces: readonly ResultPiece[]): Promise<boolean> {
    return this.db.transaction(async () => {
      // The analysis row locked: a cancel or failure waits, then drops what this stored.
      const running = await this.db.row(
        "SELECT 1 FROM analyses WHERE uuid = $1 AND state = 'running' FOR UPDATE",
        [uuid],
      );
      if (!running) return false;
      // A row per piece, the CSV a plain text parameter (see complete); bytes go in binary format,
      // which for a text column is the UTF-8 text itself (checked by the server as text is).
      for (const { metric, piece, csv } of pieces)
        await this.db.run(
          `INSERT INTO analysis_result_pieces (analysis_uuid, metric, piece, csv) VALUES ($1, $2, $3, $4)
           ON CONFLICT (analysis_uuid, metric, piece) DO UPDATE SET csv = excluded.csv`,
          [uuid, metric, piece, csv],
        );
      return true;
    });
  }

  fail(uuid: string, reason: string): Promise<boolean> {
    const set = "state = 'failed', failure_reason = $, finished_at = $";
    return this.endWithoutResults(uuid, ["queued", "running"], set, reason, now());
  }

  cancel(uuid: string): Promise<boolean> {
    return this.endWithoutResults(uuid, ["queued", "running"], "state = 'cancelled', finished_at = $", now());
  }

  markDeleted(uuid: string): Promise<boolean> {
    const set = "state = 'deleted', name_key = NULL, metrics = '[]'";
    return this.endWithoutResults(uuid, ["done", "failed", "cancelled"], set);
  }

  async result(uuid: string, metric: string): Promise<string | null> {
    const row = await this.db.row<{ csv: string }>(
      "SELECT csv FROM analysis_results WHERE analysis_uuid = $1 AND metric = $2",
      [uuid, metric],
    );
    if (!row) return null;
    const pieces = await this.db.rows<{ csv: string }>(
      "SELECT csv FROM analysis_result_pieces WHERE analysis_uuid = $1 AND metric = $2 ORDER BY piece",
      [uuid, metric],
    );
    return pieces.length === 0 ? row.csv : [row.csv, ...pieces.map((p) => p.csv)].join("");
  }

  /** A transition that leaves no results (failed, cancelled, deleted): what was stored is dropped with it. */
  private endWithoutResults(uuid: string, from: AnalysisState[], set: string, ...values: unknown[]) {
    return this.db.transaction(async () => {
      if (!(await this.transition(uuid, from, set, ...values))) return false;
      await this.dropResults(uuid, true);
      return true;
    });
  }

  /** The stored results of an analysis, and its pieces with `pieces`. */
  private async dropResults(uuid: string, pieces: boolean): Promise<void> {
    await this.db.run("DELETE FROM analysis_results WHERE analysis_uuid = $1", [uuid]);
    if (pieces) await this.db.run("DELETE FROM analysis_result_pieces WHERE analysis_uuid = $1", [uuid]);
  }

  async unfinished(): Promise<StoredAnalysis[]> {
    const rows = await this.db.rows<AnalysisRow>(
      "SELECT * FROM analyses WHERE state IN ('queued', 'running') ORDER BY created_at, uuid",
    );
    return rows.map(toAnalysis);
  }

  async assignJob(uuid: string, jobId: string, expected: string | null): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE analyses SET job_id = $1
       WHERE uuid = $2 AND job_id IS NOT DISTINCT FROM $3::text AND state IN ('queued', 'running')`,
      [jobId, uuid, expected],
    );
    return changed === 1;
  }

  /** Updates the analysis only from one of the `from` states (`$` in `set` numbered in order); true when it did. */
  private async transition(uuid: string, from: AnalysisState[], set: string, ...values: unknown[]) {
    const { sql: assignments, next } = numbered(set);
    const sql = `UPDATE analyses SET ${assignments} WHERE uuid = $${next} AND state IN (${placeholders(from.length, next + 1)})`;
    return (await this.db.run(sql, [...values, uuid, ...from])) === 1;
  }
}

export class PostgresTags implements TagRepo {
  constructor(private readonly db: PgDb) {}

  async create(orgId: string, name: string, createdBy: string): Promise<boolean> {
    const changed = await this.db.run(
      `INSERT INTO tags (org_id, name, name_key, created_by, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (org_id, name_key) DO NOTHING`,
      [orgId, name.trim(), nameKey(name), createdBy, now()],
    );
    return changed === 1;
  }

  async list(orgId: string): Promise<TagSummary[]> {
    const rows = await this.db.rows<{
      name: string;
      created_by: string;
      created_at: string;
      analysis_count: number;
    }>(
      `SELECT t.name, t.created_by, t.created_at,
              (SELECT COUNT(*) FROM analysis_tags at JOIN analyses a ON a.uuid = at.analysis_uuid
                WHERE at.tag_id = t.id AND a.state <> 'deleted') AS analysis_count
       FROM tags t WHERE t.org_id = $1 ORDER BY t.name_key`,
      [orgId],
    );
    return rows.map((r) => ({
      name: r.name,
      createdBy: r.created_by,
      createdAt: r.created_at,
      analysisCount: r.analysis_count,
    }));
  }

  async existing(orgId: string, names: string[]): Promise<string[]> {
    const rows = await this.db.rows<{ name: string; name_key: string }>(
      "SELECT name, name_key FROM tags WHERE org_id = $1 AND name_key = ANY($2::text[])",
      [orgId, names.map(nameKey)],
    );
    const byKey = new Map(rows.map((r) => [r.name_key, r.name]));
    return names.flatMap((n) => {
      const found = byKey.get(nameKey(n));
      return found === undefined ? [] : [found];
    });
  }

  async tag(orgId: string, names: string[], analysisUuids: string[], createdBy: string): Promise<void> {
    await this.db.transaction(async () => {
      for (const name of names) {
        await this.create(orgId, name, createdBy);
        await this.db.run(
          `INSERT INTO analysis_tags (analysis_uuid, tag_id)
           SELECT u, t.id FROM unnest($1::text[]) u, tags t WHERE t.org_id = $2 AND t.name_key = $3
           ON CONFLICT DO NOTHING`,
          [analysisUuids, orgId, nameKey(name)],
        );
      }
    });
  }

  async untag(orgId: string, names: string[], analysisUuids: string[]): Promise<void> {
    await this.db.run(
      `DELETE FROM analysis_tags WHERE analysis_uuid = ANY($1::text[])
       AND tag_id IN (SELECT id FROM tags WHERE org_id = $2 AND name_key = ANY($3::text[]))`,
      [analysisUuids, orgId, names.map(nameKey)],
    );
  }

  async tagsOf(analysisUuid: string): Promise<string[]> {
    const rows = await this.db.rows<{ name: string }>(
      `SELECT t.name FROM analysis_tags at JOIN tags t ON t.id = at.tag_id
       WHERE at.analysis_uuid = $1 ORDER BY t.name_key`,
      [analysisUuid],
    );
    return rows.map((r) => r.name);
  }
}

export class PostgresNotifications implements NotificationRepo {
  constructor(private readonly db: PgDb) {}

  async completionWebhook(orgId: string): Promise<string | null> {
    const row = await this.db.row<{ url: string }>("SELECT url FROM completion_webhooks WHERE org_id = $1", [
      orgId,
    ]);
    return row?.url ?? null;
  }

  async setCompletionWebhook(orgId: string, url: string | null): Promise<void> {
    if (url === null) await this.db.run("DELETE FROM completion_webhooks WHERE org_id = $1", [orgId]);
    else
      await this.db.run(
        `INSERT INTO completion_webhooks (org_id, url, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (org_id) DO UPDATE SET url = excluded.url, updated_at = excluded.updated_at`,
        [orgId, url, now()],
      );
  }
}
