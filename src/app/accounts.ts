import { createHash, randomBytes } from "node:crypto";
import type { ApiKeyRecord, Organization } from "../domain/records.js";
import type { Store } from "./ports/store.js";
import { fail } from "../domain/errors.js";

/** API keys carry 256 random bits, so a plain SHA-256 is a safe, fast lookup hash. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export interface IssuedKey {
  key: string;
  record: ApiKeyRecord;
}

/** Creates a key for an organization; the plain key is returned once and never stored. */
export async function issueApiKey(
  store: Store,
  orgId: string,
  label: string | null = null,
): Promise<IssuedKey> {
  const key = `sf_${randomBytes(32).toString("base64url")}`;
  const record: ApiKeyRecord = {
    id: crypto.randomUUID(),
    orgId,
    prefix: key.slice(0, 10),
    label,
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await store.accounts.insertKey(record, hashApiKey(key));
  return { key, record };
}

export async function authenticateKey(store: Store, key: string | undefined): Promise<ApiKeyRecord | null> {
  if (!key) return null;
  return await store.accounts.findKeyByHash(hashApiKey(key));
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export function assertEmail(email: string, field = "insight_login_email"): void {
  if (!EMAIL.test(email)) throw fail("invalid_email", { email }, field);
}

/** The caller's login must belong to the key's organization (vendor rule for creating resources). */
export async function assertMember(
  store: Store,
  email: string,
  orgId: string,
  field = "insight_login_email",
): Promise<void> {
  assertEmail(email, field);
  if (!(await store.accounts.isMember(email, orgId))) throw fail("not_a_member", { email }, field);
}

export async function requireOrganization(store: Store, idOrName: string): Promise<Organization> {
  const org = await store.accounts.findOrganization(idOrName);
  if (!org) throw fail("unknown_organization", { organization: idOrName });
  return org;
}

export const DEMO_ORG = "Streetflow Demo";
export const DEMO_EMAIL = "demo@streetflow.local";
