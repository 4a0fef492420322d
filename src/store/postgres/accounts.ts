import { createHash, randomBytes } from "node:crypto";
import { NameTakenError, type AccountRepo, type SecurityRepo } from "../../app/ports/store.js";
import type {
  ApiKeyRecord,
  AuditEntry,
  FailureRecord,
  Organization,
  SessionRecord,
  UserRecord,
  UserRole,
} from "../../domain/records.js";
import { isUniqueViolation, type PgDb } from "./db.js";
import {
  SESSION_SELECT,
  toKey,
  toOrg,
  toSession,
  toUser,
  type KeyRow,
  type MemberRow,
  type OrgRow,
  type SessionRow,
} from "../rows.js";

const now = () => new Date().toISOString();
const key = (s: string) => s.trim().toLowerCase();

const KEY_COLUMNS = "id, org_id, prefix, label, created_at, revoked_at";
export class PostgresAccounts implements AccountRepo {
  constructor(private readonly db: PgDb) {}

  async isEmpty(): Promise<boolean> {
    return (await this.db.row("SELECT 1 FROM organizations LIMIT 1")) === undefined;
  }

  async createOrganization(name: string): Promise<Organization> {
    const org: Organization = { id: crypto.randomUUID(), name: name.trim(), createdAt: now() };
    try {
      await this.db.run(
        "INSERT INTO organizations (id, name, name_key, created_at) VALUES ($1, $2, $3, $4)",
        [org.id, org.name, key(name), org.createdAt],
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw new NameTakenError("organization", name);
      throw e;
    }
    return org;
  }

  async findOrganization(idOrName: string): Promise<Organization | null> {
    const row = await this.db.row<OrgRow>(
      "SELECT id, name, created_at FROM organizations WHERE id = $1 OR name_key = $2",
      [idOrName, key(idOrName)],
    );
    return row ? toOrg(row) : null;
  }

  async listOrganizations(): Promise<Organization[]> {
    return (
      await this.db.rows<OrgRow>("SELECT id, name, created_at FROM organizations ORDER BY created_at")
    ).map(toOrg);
  }

  async addUser(email: string, orgId: string, role: UserRole = "analyst"): Promise<void> {
    await this.db.transaction(async () => {
      await this.db.run(
        "INSERT INTO users (email_key, email, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        [key(email), email.trim(), now()],
      );
      await this.db.run(
        "INSERT INTO memberships (email_key, org_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        [key(email), orgId, role],
      );
    });
  }

  async isMember(email: string, orgId: string): Promise<boolean> {
    const row = await this.db.row("SELECT 1 FROM memberships WHERE email_key = $1 AND org_id = $2", [
      key(email),
      orgId,
    ]);
    return row !== undefined;
  }

  async listMembers(orgId: string): Promise<string[]> {
    const rows = await this.db.rows<{ email: string }>(
      `SELECT u.email FROM memberships m JOIN users u ON u.email_key = m.email_key
       WHERE m.org_id = $1 ORDER BY u.email_key`,
      [orgId],
    );
    return rows.map((r) => r.email);
  }

  async insertKey(record: ApiKeyRecord, keyHash: string): Promise<void> {
    await this.db.run(
      `INSERT INTO api_keys (id, org_id, prefix, key_hash, label, created_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [record.id, record.orgId, record.prefix, keyHash, record.label, record.createdAt, record.revokedAt],
    );
  }

  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const row = await this.db.row<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [keyHash],
    );
    return row ? toKey(row) : null;
  }

  async listKeys(orgId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.rows<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = $1 ORDER BY created_at`,
      [orgId],
    );
    return rows.map(toKey);
  }

  async revokeKey(idOrPrefix: string): Promise<ApiKeyRecord | null> {
    const row = await this.db.row<KeyRow>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2)
       WHERE id = (SELECT id FROM api_keys WHERE id = $1 OR prefix = $1 LIMIT 1) RETURNING ${KEY_COLUMNS}`,
      [idOrPrefix, now()],
    );
    return row ? toKey(row) : null;
  }
}

const MEMBER_SELECT = `SELECT u.email, m.role, u.password_hash, u.disabled_at
  FROM memberships m JOIN users u ON u.email_key = m.email_key`;

export class PostgresSecurity implements SecurityRepo {
  constructor(private readonly db: PgDb) {}

  async member(email: string, orgId: string): Promise<UserRecord | null> {
    const row = await this.db.row<MemberRow>(`${MEMBER_SELECT} WHERE m.email_key = $1 AND m.org_id = $2`, [
      key(email),
      orgId,
    ]);
    return row ? toUser(row) : null;
  }

  async organizationsOf(email: string): Promise<string[]> {
    const rows = await this.db.rows<{ org_id: string }>(
      "SELECT org_id FROM memberships WHERE email_key = $1 ORDER BY seq",
      [key(email)],
    );
    return rows.map((r) => r.org_id);
  }

  async members(orgId: string): Promise<UserRecord[]> {
    const rows = await this.db.rows<MemberRow>(`${MEMBER_SELECT} WHERE m.org_id = $1 ORDER BY u.email_key`, [
      orgId,
    ]);
    return rows.map(toUser);
  }

  async passwordHashOf(email: string): Promise<string | null> {
    const row = await this.db.row<{ password_hash: string | null }>(
      "SELECT password_hash FROM users WHERE email_key = $1",
      [key(email)],
    );
    return row?.password_hash ?? null;
  }

  async setPasswordHash(email: string, hash: string): Promise<boolean> {
    return (
      (await this.db.run("UPDATE users SET password_hash = $1 WHERE email_key = $2", [hash, key(email)])) > 0
    );
  }

  async setRole(email: string, orgId: string, role: UserRole): Promise<boolean> {
    const sql = "UPDATE memberships SET role = $1 WHERE email_key = $2 AND org_id = $3";
    return (await this.db.run(sql, [role, key(email), orgId])) > 0;
  }

  async setDisabled(email: string, disabled: boolean, at: string): Promise<boolean> {
    const sql = "UPDATE users SET disabled_at = $1 WHERE email_key = $2";
    return (await this.db.run(sql, [disabled ? at : null, key(email)])) > 0;
  }

  async createSession(s: SessionRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO sessions (id_hash, email_key, org_id, csrf_token, created_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [s.idHash, key(s.email), s.orgId, s.csrfToken, s.createdAt, s.lastSeenAt],
    );
  }

  async findSession(idHash: string): Promise<SessionRecord | null> {
    const row = await this.db.row<SessionRow>(`${SESSION_SELECT} WHERE s.id_hash = $1`, [idHash]);
    return row ? toSession(row) : null;
  }

  async touchSession(idHash: string, at: string): Promise<void> {
    await this.db.run("UPDATE sessions SET last_seen_at = $1 WHERE id_hash = $2", [at, idHash]);
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.run("DELETE FROM sessions WHERE id_hash = $1", [idHash]);
  }

  async deleteSessionsOf(email: string): Promise<void> {
    await this.db.run("DELETE FROM sessions WHERE email_key = $1", [key(email)]);
  }

  async failuresOf(subject: string): Promise<FailureRecord | null> {
    const row = await this.db.row<{ failures: number; last_failure_at: string; locked_until: string | null }>(
      "SELECT failures, last_failure_at, locked_until FROM login_failures WHERE subject = $1",
      [subject],
    );
    return row
      ? { failures: row.failures, lastFailureAt: row.last_failure_at, lockedUntil: row.locked_until }
      : null;
  }

  async saveFailures(subject: string, r: FailureRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO login_failures (subject, failures, last_failure_at, locked_until) VALUES ($1, $2, $3, $4)
       ON CONFLICT (subject) DO UPDATE SET failures = excluded.failures,
       last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until`,
      [subject, r.failures, r.lastFailureAt, r.lockedUntil],
    );
  }

  async clearFailures(subject: string): Promise<void> {
    await this.db.run("DELETE FROM login_failures WHERE subject = $1", [subject]);
  }

  async createReset(tokenHash: string, email: string, expiresAt: string): Promise<void> {
    await this.db.run("INSERT INTO password_resets (token_hash, email_key, expires_at) VALUES ($1, $2, $3)", [
      tokenHash,
      key(email),
      expiresAt,
    ]);
  }

  /** One statement: two processes consuming the same link at once cannot both succeed. */
  async consumeReset(tokenHash: string, at: string): Promise<string | null> {
    const row = await this.db.row<{ email: string }>(
      `UPDATE password_resets r SET used_at = $2 FROM users u
       WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > $2 AND u.email_key = r.email_key
       RETURNING u.email`,
      [tokenHash, at],
    );
    return row?.email ?? null;
  }

  async audit(e: AuditEntry): Promise<void> {
    await this.db.run(
      "INSERT INTO audit_log (org_id, at, actor, action, target) VALUES ($1, $2, $3, $4, $5)",
      [e.orgId, e.at, e.actor, e.action, e.target],
    );
  }

  async auditLog(orgId: string, limit: number): Promise<AuditEntry[]> {
    const rows = await this.db.rows<{
      org_id: string;
      at: string;
      actor: string;
      action: string;
      target: string | null;
    }>(
      "SELECT org_id, at, actor, action, target FROM audit_log WHERE org_id = $1 ORDER BY id DESC LIMIT $2",
      [orgId, limit],
    );
    return rows.map((r) => ({
      orgId: r.org_id,
      at: r.at,
      actor: r.actor,
      action: r.action,
      target: r.target,
    }));
  }

  async rateLimitOf(keyId: string): Promise<number | null> {
    const row = await this.db.row<{ n: number | null }>(
      "SELECT rate_limit_per_minute AS n FROM api_keys WHERE id = $1",
      [keyId],
    );
    return row?.n ?? null;
  }

  async setRateLimit(keyId: string, perMinute: number | null): Promise<void> {
    await this.db.run("UPDATE api_keys SET rate_limit_per_minute = $1 WHERE id = $2", [perMinute, keyId]);
  }

  async setKeyLabel(keyId: string, label: string | null): Promise<void> {
    await this.db.run("UPDATE api_keys SET label = $1 WHERE id = $2", [label, keyId]);
  }

  async webKeyOf(orgId: string): Promise<ApiKeyRecord> {
    const find = () =>
      this.db.row<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = $1 AND kind = 'web' AND revoked_at IS NULL
         ORDER BY created_at, id LIMIT 1`,
        [orgId],
      );
    let row = await find();
    if (!row) {
      // No one holds this key: its hash is of random bytes never shown. It exists to meter and limit sessions.
      // Two processes creating it at once each add one; both then read the older, so they agree.
      const secret = randomBytes(32).toString("base64url");
      await this.db.run(
        `INSERT INTO api_keys (id, org_id, prefix, key_hash, label, created_at, revoked_at, kind)
         VALUES ($1, $2, 'web-app', $3, 'web application sign-ins', $4, NULL, 'web')`,
        [crypto.randomUUID(), orgId, createHash("sha256").update(secret).digest("hex"), now()],
      );
      row = (await find())!;
    }
    return toKey(row);
  }

  async monthlyUsage(orgId: string, from: string) {
    return this.db.rows<{ keyId: string; month: string; calls: number; units: number }>(
      `SELECT key_id AS "keyId", substr(at, 1, 7) AS month, COUNT(*)::int AS calls, SUM(units)::float8 AS units
       FROM counts_usage WHERE org_id = $1 AND at >= $2 GROUP BY key_id, month ORDER BY month, key_id`,
      [orgId, from],
    );
  }
}
