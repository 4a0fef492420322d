import type Database from "better-sqlite3";
import type { NotificationRepo, TagRepo } from "../../app/ports/store.js";
import type { TagSummary } from "../../domain/records.js";
import type { Sync } from "./async-port.js";

const nameKey = (name: string) => name.trim().toLowerCase();
const now = () => new Date().toISOString();

export class SqliteTags implements Sync<TagRepo> {
  constructor(private readonly db: Database.Database) {}

  create(orgId: string, name: string, createdBy: string): boolean {
    const info = this.db
      .prepare(
        `INSERT INTO tags (org_id, name, name_key, created_by, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (org_id, name_key) DO NOTHING`,
      )
      .run(orgId, name.trim(), nameKey(name), createdBy, now());
    return info.changes === 1;
  }

  list(orgId: string): TagSummary[] {
    const rows = this.db
      .prepare(
        `SELECT t.name, t.created_by, t.created_at,
                (SELECT COUNT(*) FROM analysis_tags at JOIN analyses a ON a.uuid = at.analysis_uuid
                  WHERE at.tag_id = t.id AND a.state <> 'deleted') AS analysis_count
         FROM tags t WHERE t.org_id = ? ORDER BY t.name_key`,
      )
      .all(orgId) as { name: string; created_by: string; created_at: string; analysis_count: number }[];
    return rows.map((r) => ({
      name: r.name,
      createdBy: r.created_by,
      createdAt: r.created_at,
      analysisCount: r.analysis_count,
    }));
  }

  existing(orgId: string, names: string[]): string[] {
    const find = this.db.prepare("SELECT name FROM tags WHERE org_id = ? AND name_key = ?");
    return names.flatMap((n) => {
      const row = find.get(orgId, nameKey(n)) as { name: string } | undefined;
      return row ? [row.name] : [];
    });
  }

  tag(orgId: string, names: string[], analysisUuids: string[], createdBy: string): void {
    const link = this.db.prepare(
      `INSERT OR IGNORE INTO analysis_tags (analysis_uuid, tag_id)
       SELECT ?, id FROM tags WHERE org_id = ? AND name_key = ?`,
    );
    this.db.transaction(() => {
      for (const name of names) {
        this.create(orgId, name, createdBy);
        for (const uuid of analysisUuids) link.run(uuid, orgId, nameKey(name));
      }
    })();
  }

  untag(orgId: string, names: string[], analysisUuids: string[]): void {
    const unlink = this.db.prepare(
      `DELETE FROM analysis_tags WHERE analysis_uuid = ?
       AND tag_id = (SELECT id FROM tags WHERE org_id = ? AND name_key = ?)`,
    );
    this.db.transaction(() => {
      for (const name of names) for (const uuid of analysisUuids) unlink.run(uuid, orgId, nameKey(name));
    })();
  }

  tagsOf(analysisUuid: string): string[] {
    const rows = this.db
      .prepare(
        `SELECT t.name FROM analysis_tags at JOIN tags t ON t.id = at.tag_id
         WHERE at.analysis_uuid = ? ORDER BY t.name_key`,
      )
      .all(analysisUuid) as { name: string }[];
    return rows.map((r) => r.name);
  }
}

export class SqliteNotifications implements Sync<NotificationRepo> {
  constructor(private readonly db: Database.Database) {}

  completionWebhook(orgId: string): string | null {
    const row = this.db.prepare("SELECT url FROM completion_webhooks WHERE org_id = ?").get(orgId) as
      { url: string } | undefined;
    return row?.url ?? null;
  }

  setCompletionWebhook(orgId: string, url: string | null): void {
    if (url === null) this.db.prepare("DELETE FROM completion_webhooks WHERE org_id = ?").run(orgId);
    else
      this.db
        .prepare(
          `INSERT INTO completion_webhooks (org_id, url, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (org_id) DO UPDATE SET url = excluded.url, updated_at = excluded.updated_at`,
        )
        .run(orgId, url, now());
  }
}
