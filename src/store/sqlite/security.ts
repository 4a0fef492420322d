import { randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import type {
  ApiKeyRecord,
  AuditEntry,
  FailureRecord,
  SessionRecord,
  UserRecord,
  UserRole,
} from "../../domain/records.js";
import type { SecurityRepo } from "../../app/ports/store.js";
import { statementCache } from "./statements.js";
import { createHash } from "node:crypto";
import type { Sync } from "./async-port.js";
import { SESSION_SELECT, toSession, toUser, type MemberRow, type SessionRow } from "../rows.js";

const key = (s: string) => s.trim().toLowerCase();

const MEMBER_SELECT = `SELECT u.email, m.role, u.password_hash, u.disabled_at
  FROM memberships m JOIN users u ON u.email_key = m.email_key`;

export class SqliteSecurity implements Sync<SecurityRepo> {
  /** Session lookups run on every signed-in request. */
  private readonly sql: (sql: string) => Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.sql = statementCache(db);
  }

  member(email: string, orgId: string): UserRecord | null {
    const row = this.sql(`${MEMBER_SELECT} WHERE m.email_key = ? AND m.org_id = ?`).get(key(email), orgId);
    return row ? toUser(row as MemberRow) : null;
  }

  organizationsOf(email: string): string[] {
    const rows = this.db
      .prepare("SELECT org_id FROM memberships WHERE email_key = ? ORDER BY rowid")
      .all(key(email)) as { org_id: string }[];
    return rows.map((r) => r.org_id);
  }

  members(orgId: string): UserRecord[] {
    const rows = this.db.prepare(`${MEMBER_SELECT} WHERE m.org_id = ? ORDER BY u.email_key`).all(orgId);
    return (rows as MemberRow[]).map(toUser);
  }

  passwordHashOf(email: string): string | null {
    const row = this.db.prepare("SELECT password_hash FROM users WHERE email_key = ?").get(key(email)) as
      { password_hash: string | null } | undefined;
    return row?.password_hash ?? null;
  }

  setPasswordHash(email: string, hash: string): boolean {
    return (
      this.db.prepare("UPDATE users SET password_hash = ? WHERE email_key = ?").run(hash, key(email))
        .changes > 0
    );
  }

  setRole(email: string, orgId: string, role: UserRole): boolean {
    return (
      this.db
        .prepare("UPDATE memberships SET role = ? WHERE email_key = ? AND org_id = ?")
        .run(role, key(email), orgId).changes > 0
    );
  }

  setDisabled(email: string, disabled: boolean, at: string): boolean {
    return (
      this.db
        .prepare("UPDATE users SET disabled_at = ? WHERE email_key = ?")
        .run(disabled ? at : null, key(email)).changes > 0
    );
  }

  createSession(s: SessionRecord): void {
    this.db
      .prepare(
        "INSERT INTO sessions (id_hash, email_key, org_id, csrf_token, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(s.idHash, key(s.email), s.orgId, s.csrfToken, s.createdAt, s.lastSeenAt);
  }

  findSession(idHash: string): SessionRecord | null {
    const row = this.sql(`${SESSION_SELECT} WHERE s.id_hash = ?`).get(idHash) as SessionRow | undefined;
    return row ? toSession(row) : null;
  }

  touchSession(idHash: string, at: string): void {
    this.sql("UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?").run(at, idHash);
  }

  deleteSession(idHash: string): void {
    this.db.prepare("DELETE FROM sessions WHERE id_hash = ?").run(idHash);
  }

  deleteSessionsOf(email: string): void {
    this.db.prepare("DELETE FROM sessions WHERE email_key = ?").run(key(email));
  }

  failuresOf(subject: string): FailureRecord | null {
    const row = this.db
      .prepare("SELECT failures, last_failure_at, locked_until FROM login_failures WHERE subject = ?")
      .get(subject) as { failures: number; last_failure_at: string; locked_until: string | null } | undefined;
    return row
      ? { failures: row.failures, lastFailureAt: row.last_failure_at, lockedUntil: row.locked_until }
      : null;
  }

  saveFailures(subject: string, r: FailureRecord): void {
    this.db
      .prepare(
        `INSERT INTO login_failures (subject, failures, last_failure_at, locked_until) VALUES (?, ?, ?, ?)
         ON CONFLICT (subject) DO UPDATE SET failures = excluded.failures,
         last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until`,
      )
      .run(subject, r.failures, r.lastFailureAt, r.lockedUntil);
  }

  clearFailures(subject: string): void {
    this.db.prepare("DELETE FROM login_failures WHERE subject = ?").run(subject);
  }

  createReset(tokenHash: string, email: string, expiresAt: string): void {
    this.db
      .prepare("INSERT INTO password_resets (token_hash, email_key, expires_at) VALUES (?, ?, ?)")
      .run(tokenHash, key(email), expiresAt);
  }

  consumeReset(tokenHash: string, now: string): string | null {
    return this.db.transaction(() => {
      const row = this.db
        .prepare(
          `SELECT u.email FROM password_resets r JOIN users u ON u.email_key = r.email_key
           WHERE r.token_hash = ? AND r.used_at IS NULL AND r.expires_at > ?`,
        )
        .get(tokenHash, now) as { email: string } | undefined;
      if (!row) return null;
      this.db.prepare("UPDATE password_resets SET used_at = ? WHERE token_hash = ?").run(now, tokenHash);
      return row.email;
    })();
  }

  audit(e: AuditEntry): void {
    this.db
      .prepare("INSERT INTO audit_log (org_id, at, actor, action, target) VALUES (?, ?, ?, ?, ?)")
      .run(e.orgId, e.at, e.actor, e.action, e.target);
  }

  auditLog(orgId: string, limit: number): AuditEntry[] {
    const rows = this.db
      .prepare(
        "SELECT org_id, at, actor, action, target FROM audit_log WHERE org_id = ? ORDER BY id DESC LIMIT ?",
      )
      .all(orgId, limit) as {
      org_id: string;
      at: string;
      actor: string;
      action: string;
      target: string | null;
    }[];
    return rows.map((r) => ({
      orgId: r.org_id,
      at: r.at,
      actor: r.actor,
      action: r.action,
      target: r.target,
    }));
  }

  rateLimitOf(keyId: string): number | null {
    const row = this.sql("SELECT rate_limit_per_minute AS n FROM api_keys WHERE id = ?").get(keyId) as
      { n: number | null } | undefined;
    return row?.n ?? null;
  }

  setRateLimit(keyId: string, perMinute: number | null): void {
    this.db.prepare("UPDATE api_keys SET rate_limit_per_minute = ? WHERE id = ?").run(perMinute, keyId);
  }

  setKeyLabel(keyId: string, label: string | null): void {
    this.db.prepare("UPDATE api_keys SET label = ? WHERE id = ?").run(label, keyId);
  }

  webKeyOf(orgId: string): ApiKeyRecord {
    const select = "SELECT id, org_id, prefix, label, created_at, revoked_at FROM api_keys";
    const find = () =>
      this.sql(`${select} WHERE org_id = ? AND kind = 'web' AND revoked_at IS NULL`).get(orgId) as
        | {
            id: string;
            org_id: string;
            prefix: string;
            label: string | null;
            created_at: string;
            revoked_at: null;
          }
        | undefined;
    let row = find();
    if (!row) {
      // No one holds this key: its hash is of random bytes never shown. It exists to meter and limit sessions.
      const secret = randomBytes(32).toString("base64url");
      this.db
        .prepare(
          `INSERT INTO api_keys (id, org_id, prefix, key_hash, label, created_at, revoked_at, kind)
           VALUES (?, ?, ?, ?, ?, ?, NULL, 'web')`,
        )
        .run(
          crypto.randomUUID(),
          orgId,
          "web-app",
          createHash("sha256").update(secret).digest("hex"),
          "web application sign-ins",
          new Date().toISOString(),
        );
      row = find()!;
    }
    return {
      id: row.id,
      orgId: row.org_id,
      prefix: row.prefix,
      label: row.label,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
    };
  }

  monthlyUsage(orgId: string, from: string) {
    return this.db
      .prepare(
        `SELECT key_id AS keyId, substr(at, 1, 7) AS month, COUNT(*) AS calls, SUM(units) AS units
         FROM counts_usage WHERE org_id = ? AND at >= ? GROUP BY key_id, month ORDER BY month, key_id`,
      )
      .all(orgId, from) as { keyId: string; month: string; calls: number; units: number }[];
  }
}
