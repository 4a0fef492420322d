import { fail } from "../errors.js";

import { ROLES, type Role } from "../../shared/vocabulary.js";

export { ROLES, type Role };

/** Each role can do everything the roles after it can. */
const RANK: Record<Role, number> = { viewer: 0, analyst: 1, admin: 2 };

export const isRole = (value: unknown): value is Role => ROLES.includes(value as Role);

/**
 * Who is making a request: a person signed in to the web application (a session) or a program holding an
 * API key. Keys act as analysts, as the vendor interfaces always allowed them to; they are never admins.
 */
export interface Principal {
  orgId: string;
  role: Role;
  via: "session" | "key";
  /** The signed-in user's e-mail (sessions only). */
  email: string | null;
  /** The API key's id (for sessions: the organization's web-app key that meters their counts calls). */
  keyId: string;
  /** How the audit log names the actor: the e-mail, or `key sf_xxxxxxx`. */
  actor: string;
}

/** 403 unless the principal's role is at least `role`. */
export function requireRole(principal: Principal, role: Role, action: string): void {
  if (RANK[principal.role] < RANK[role]) throw fail("forbidden", { action, role, actual: principal.role });
}
