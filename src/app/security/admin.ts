/** What an organization's admin does in the admin page: users, keys, quotas, rate limits, usage, audit log. */
import type { ApiKeyRecord, AuditEntry, UserRecord } from "../../domain/records.js";
import type { Store } from "../ports/store.js";
import { assertEmail, issueApiKey, type IssuedKey } from "../accounts.js";
import { fail } from "../../domain/errors.js";
import { audit } from "./guarded.js";
import type { SecurityPolicy } from "../../domain/security/policy.js";
import { requireRole, type Principal, type Role } from "../../domain/security/principal.js";
import { createResetToken } from "./sessions.js";

const requireAdmin = (p: Principal, action: string) => requireRole(p, "admin", action);

export interface UserView {
  email: string;
  role: Role;
  disabled: boolean;
  has_password: boolean;
}

const userView = (u: UserRecord): UserView => ({
  email: u.email,
  role: u.role,
  disabled: u.disabledAt !== null,
  has_password: u.passwordHash !== null,
});

export async function listUsers(store: Store, p: Principal): Promise<UserView[]> {
  requireAdmin(p, "listing users");
  return (await store.security.members(p.orgId)).map(userView);
}

async function requireMember(store: Store, p: Principal, email: string): Promise<UserRecord> {
  const user = await store.security.member(email, p.orgId);
  if (!user) throw fail("unknown_user", { email }, "email");
  return user;
}

/** Admins cannot demote or disable themselves: an organization always keeps the admin doing this. */
function refuseSelf(p: Principal, email: string, what: string): void {
  if (p.email?.toLowerCase() === email.trim().toLowerCase())
    throw fail("own_account", { action: what }, "email");
}

/** Adds a user with a role and answers a one-time link with which they set their password. */
export async function inviteUser(
  store: Store,
  policy: SecurityPolicy,
  p: Principal,
  email: string,
  role: Role,
): Promise<{ user: UserView; resetToken: string }> {
  requireAdmin(p, "inviting users");
  assertEmail(email, "email");
  if (await store.security.member(email, p.orgId)) throw fail("user_exists", { email }, "email");
  await store.accounts.addUser(email, p.orgId, role);
  await audit(store, p, "user.invite", `${email} as ${role}`);
  return {
    user: userView(await requireMember(store, p, email)),
    resetToken: await createResetToken(store, policy, email),
  };
}

export async function setUserRole(store: Store, p: Principal, email: string, role: Role): Promise<UserView> {
  requireAdmin(p, "changing roles");
  await requireMember(store, p, email);
  refuseSelf(p, email, "change the role of");
  await store.security.setRole(email, p.orgId, role);
  await audit(store, p, "user.role", `${email} → ${role}`);
  return userView(await requireMember(store, p, email));
}

/** Disabling ends the user's sessions at once; their next request is refused. */
export async function setUserDisabled(
  store: Store,
  p: Principal,
  email: string,
  disabled: boolean,
): Promise<UserView> {
  requireAdmin(p, "disabling users");
  await requireMember(store, p, email);
  refuseSelf(p, email, "disable");
  await store.security.setDisabled(email, disabled, new Date().toISOString());
  if (disabled) await store.security.deleteSessionsOf(email);
  await audit(store, p, disabled ? "user.disable" : "user.enable", email);
  return userView(await requireMember(store, p, email));
}

export async function passwordResetLink(
  store: Store,
  policy: SecurityPolicy,
  p: Principal,
  email: string,
): Promise<string> {
  requireAdmin(p, "resetting passwords");
  await requireMember(store, p, email);
  await audit(store, p, "user.reset_link", email);
  return await createResetToken(store, policy, email);
}

export interface KeyView {
  id: string;
  prefix: string;
  label: string | null;
  created_at: string;
  revoked: boolean;
  quota_units: number | null;
  rate_limit_per_minute: number | null;
}

const keyView = async (store: Store, k: ApiKeyRecord): Promise<KeyView> => ({
  id: k.id,
  prefix: k.prefix,
  label: k.label,
  created_at: k.createdAt,
  revoked: k.revokedAt !== null,
  quota_units: await store.usage.quotaOf(k.id),
  rate_limit_per_minute: await store.security.rateLimitOf(k.id),
});

export async function listKeys(store: Store, p: Principal): Promise<KeyView[]> {
  requireAdmin(p, "listing API keys");
  return Promise.all((await store.accounts.listKeys(p.orgId)).map(async (k) => await keyView(store, k)));
}

async function requireKey(store: Store, p: Principal, keyId: string): Promise<ApiKeyRecord> {
  const key = (await store.accounts.listKeys(p.orgId)).find((k) => k.id === keyId);
  if (!key) throw fail("unknown_key", { key: keyId }, "key_id");
  return key;
}

/** The plain key is in the answer once and never stored. */
export async function createKey(
  store: Store,
  p: Principal,
  label: string | null,
): Promise<IssuedKey & { view: KeyView }> {
  requireAdmin(p, "creating API keys");
  const issued = await issueApiKey(store, p.orgId, label);
  await audit(store, p, "key.create", `${issued.record.prefix} ${label ?? ""}`.trim());
  return { ...issued, view: await keyView(store, issued.record) };
}

export interface KeyChanges {
  label?: string | null;
  quota_units?: number | null;
  rate_limit_per_minute?: number | null;
}

export async function updateKey(
  store: Store,
  p: Principal,
  keyId: string,
  changes: KeyChanges,
): Promise<KeyView> {
  requireAdmin(p, "changing API keys");
  const key = await requireKey(store, p, keyId);
  if (key.revokedAt) throw fail("key_revoked", { key: key.prefix }, "key_id");
  for (const field of ["quota_units", "rate_limit_per_minute"] as const) {
    const v = changes[field];
    if (v !== undefined && v !== null && (!Number.isInteger(v) || v < 1))
      throw fail("invalid_limit", { field, rule: "a whole number of at least 1, or null" }, field);
  }
  if (changes.label !== undefined) await store.security.setKeyLabel(key.id, changes.label);
  if (changes.quota_units !== undefined) await store.usage.setQuota(key.id, changes.quota_units);
  if (changes.rate_limit_per_minute !== undefined)
    await store.security.setRateLimit(key.id, changes.rate_limit_per_minute);
  const what = Object.entries(changes)
    .map(([k, v]) => `${k}=${v === null ? "none" : v}`)
    .join(", ");
  await audit(store, p, "key.update", `${key.prefix}: ${what}`);
  return await keyView(store, await requireKey(store, p, keyId));
}

export async function revokeKey(store: Store, p: Principal, keyId: string): Promise<KeyView> {
  requireAdmin(p, "revoking API keys");
  const key = await requireKey(store, p, keyId);
  await store.accounts.revokeKey(key.id);
  await audit(store, p, "key.revoke", key.prefix);
  return await keyView(store, await requireKey(store, p, keyId));
}

export interface MonthlyUsage {
  key_id: string;
  month: string;
  calls: number;
  units: number;
}

/** Metered counts usage per key and month, for the last `months` months including this one. */
export async function monthlyUsage(
  store: Store,
  p: Principal,
  months: number,
  now = new Date(),
): Promise<MonthlyUsage[]> {
  requireAdmin(p, "reading usage");
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (months - 1), 1)).toISOString();
  return (await store.security.monthlyUsage(p.orgId, from)).map((u) => ({
    key_id: u.keyId,
    month: u.month,
    calls: u.calls,
    units: u.units,
  }));
}

export async function auditLog(
  store: Store,
  p: Principal,
  limit = 200,
): Promise<Omit<AuditEntry, "orgId">[]> {
  requireAdmin(p, "reading the audit log");
  return (await store.security.auditLog(p.orgId, limit)).map(({ at, actor, action, target }) => ({
    at,
    actor,
    action,
    target,
  }));
}
