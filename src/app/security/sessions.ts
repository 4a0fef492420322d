import { createHash, randomBytes } from "node:crypto";
import type { ApiKeyRecord, SessionRecord } from "../../domain/records.js";
import type { Store } from "../ports/store.js";
import { assertEmail } from "../accounts.js";
import { fail } from "../../domain/errors.js";
import { accountSubject, assertMayTry, ipSubject, recordFailure } from "./lockout.js";
import { assertPasswordStrength, hashPassword, verifyPassword } from "../../domain/security/passwords.js";
import type { SecurityPolicy } from "../../domain/security/policy.js";
import type { Principal } from "../../domain/security/principal.js";

/** Session ids and reset tokens carry 256 random bits; the store keeps only their SHA-256. */
export const tokenHash = (token: string) => createHash("sha256").update(token).digest("hex");
const newToken = () => randomBytes(32).toString("base64url");

/** Verified against when the e-mail is unknown, so an unknown user costs as much time as a wrong password. */
let decoyHash: Promise<string> | undefined;

export interface SignedIn {
  /** The cookie's value: known to the browser only. */
  sessionId: string;
  session: SessionRecord;
}

/**
 * Checks e-mail and password, throttling and then locking per account and per client address, and opens a
 * session in the user's first organization.
 */
export async function signIn(
  store: Store,
  policy: SecurityPolicy,
  credentials: { email: string; password: string; ip: string },
): Promise<SignedIn> {
  const email = credentials.email.trim();
  assertEmail(email, "email");
  const subjects: [string, SecurityPolicy["accountLockout"]][] = [
    [accountSubject(email), policy.accountLockout],
    [ipSubject(credentials.ip), policy.ipLockout],
  ];
  for (const [subject, limits] of subjects) await assertMayTry(store, subject, limits, policy.clock());
  const stored = await store.security.passwordHashOf(email);
  const valid = await verifyPassword(
    credentials.password,
    stored ?? (await (decoyHash ??= hashPassword(newToken()))),
  );
  const orgId = (await store.security.organizationsOf(email))[0];
  if (!valid || !stored || !orgId) {
    for (const [subject, limits] of subjects) await recordFailure(store, subject, limits, policy.clock());
    throw fail("unauthorized", { reason: "the e-mail or password is wrong" });
  }
  await store.security.clearFailures(accountSubject(email));
  const member = (await store.security.member(email, orgId))!;
  if (member.disabledAt) throw fail("account_disabled");
  const sessionId = newToken();
  const at = policy.clock().toISOString();
  const session: SessionRecord = {
    idHash: tokenHash(sessionId),
    email: member.email,
    orgId,
    csrfToken: newToken(),
    createdAt: at,
    lastSeenAt: at,
  };
  await store.security.createSession(session);
  return { sessionId, session };
}

/** Writes of last-seen are spared for requests closer together than this. */
const TOUCH_EVERY_MS = 60_000;

/** The live session of a cookie value, or null (unknown, idle too long, too old, user disabled or removed). */
export async function liveSession(
  store: Store,
  policy: SecurityPolicy,
  sessionId: string,
): Promise<SessionRecord | null> {
  const idHash = tokenHash(sessionId);
  const session = await store.security.findSession(idHash);
  if (!session) return null;
  const now = policy.clock().getTime();
  const idle = now - Date.parse(session.lastSeenAt) > policy.sessionIdleMs;
  const tooOld = now - Date.parse(session.createdAt) > policy.sessionAbsoluteMs;
  const member = await store.security.member(session.email, session.orgId);
  if (idle || tooOld || !member || member.disabledAt) {
    await store.security.deleteSession(idHash);
    return null;
  }
  if (now - Date.parse(session.lastSeenAt) > TOUCH_EVERY_MS)
    await store.security.touchSession(idHash, new Date(now).toISOString());
  return session;
}

export async function signOut(store: Store, sessionId: string): Promise<void> {
  await store.security.deleteSession(tokenHash(sessionId));
}

export async function sessionPrincipal(store: Store, session: SessionRecord): Promise<Principal> {
  const member = (await store.security.member(session.email, session.orgId))!;
  return {
    orgId: session.orgId,
    role: member.role,
    via: "session",
    email: member.email,
    keyId: (await store.security.webKeyOf(session.orgId)).id,
    actor: member.email,
  };
}

/** API keys act as analysts of their organization: what the vendor interfaces always let them do. */
export const keyPrincipal = (key: ApiKeyRecord): Principal => ({
  orgId: key.orgId,
  role: "analyst",
  via: "key",
  email: null,
  keyId: key.id,
  actor: `key ${key.prefix}`,
});

/** Sets a user's password (CLI, reset link) and ends the user's sessions. */
export async function setPassword(store: Store, email: string, password: string): Promise<void> {
  assertPasswordStrength(password);
  const hash = await hashPassword(password);
  if (!(await store.security.setPasswordHash(email, hash))) throw fail("unknown_user", { email }, "email");
  await store.security.deleteSessionsOf(email);
}

/** A one-time token for the admin to pass on; its hash alone is stored. */
export async function createResetToken(store: Store, policy: SecurityPolicy, email: string): Promise<string> {
  const token = newToken();
  const expires = new Date(policy.clock().getTime() + policy.resetLinkMs).toISOString();
  await store.security.createReset(tokenHash(token), email, expires);
  return token;
}

export async function resetPassword(
  store: Store,
  policy: SecurityPolicy,
  token: string,
  password: string,
): Promise<string> {
  assertPasswordStrength(password);
  const email = await store.security.consumeReset(tokenHash(token), policy.clock().toISOString());
  if (!email) throw fail("invalid_reset_link", undefined, "token");
  await setPassword(store, email, password);
  await store.security.clearFailures(accountSubject(email));
  return email;
}
