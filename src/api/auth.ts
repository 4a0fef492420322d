import { timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { authenticateKey } from "../app/accounts.js";
import { fail } from "../domain/errors.js";
import type { SecurityPolicy } from "../domain/security/policy.js";
import { keyPrincipal, liveSession, sessionPrincipal } from "../app/security/sessions.js";
import type { Principal } from "../domain/security/principal.js";
import type { ApiKeyRecord, SessionRecord } from "../domain/records.js";
import type { Store } from "../app/ports/store.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The key the request is metered under: the caller's, or for a session its organization's web-app key. */
    apiKey: ApiKeyRecord;
    principal: Principal;
    /** Set for requests made with a session cookie. */
    session: SessionRecord | null;
  }
}

export const SESSION_COOKIE = "streetflow_session";
export const CSRF_HEADER = "x-csrf-token";

/** Where a key was found (for the error's `field`) and what was given. */
export interface GivenKey {
  field: string;
  value: unknown;
}

type KeySource = (request: FastifyRequest) => GivenKey | undefined;

function fromHeader(request: FastifyRequest, name: string): GivenKey | undefined {
  const value = request.headers[name];
  return value === undefined ? undefined : { field: name, value };
}

function fromQuery(request: FastifyRequest, name: string): GivenKey | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return value === undefined ? undefined : { field: name, value };
}

/** v2: `?key=` or header `x-stl-key`, as the published client libraries send it. */
export const zoneApiKey: KeySource = (request) =>
  fromQuery(request, "key") ?? fromHeader(request, "x-stl-key");

/** counts v1: header `x-service-key` (vendor), or `x-stl-key` that other client code sends. */
export const countsApiKey: KeySource = (request) =>
  fromHeader(request, "x-service-key") ?? fromHeader(request, "x-stl-key");

/** Any of the key places (admin and session routes take a key only to refuse it with 403). */
export const anyApiKey: KeySource = (request) => zoneApiKey(request) ?? countsApiKey(request);

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const sameToken = (given: string, expected: string) =>
  given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));

/** The session of the request's cookie, or null. */
export async function sessionOf(
  store: Store,
  policy: SecurityPolicy,
  request: FastifyRequest,
): Promise<SessionRecord | null> {
  const id = request.cookies?.[SESSION_COOKIE];
  return id ? await liveSession(store, policy, id) : null;
}

/**
 * A cookie is sent by the browser on its own, so a state-changing request made with one must also carry the
 * session's CSRF token, which only the page (same origin) can read.
 */
export function assertCsrf(request: FastifyRequest, session: SessionRecord): void {
  if (SAFE_METHODS.has(request.method)) return;
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== "string" || !sameToken(given, session.csrfToken))
    throw fail("csrf_token_invalid", { header: CSRF_HEADER });
}

/**
 * onRequest hook: an API key (exactly as the vendor interfaces define it) or a web-application session;
 * rejects with 401 before any body is parsed or work is done.
 */
export function requireApiKey(store: Store, source: KeySource, policy: SecurityPolicy) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const given = source(request);
    if (given !== undefined && given.value !== "") {
      // A repeated parameter or header arrives as an array: one key is expected, not a guess between several.
      if (typeof given.value !== "string")
        throw fail("invalid_request", { reason: `${given.field} must be given once` }, given.field);
      const record = await authenticateKey(store, given.value);
      if (!record) throw fail("unauthorized", { reason: "the API key is not valid" });
      request.apiKey = record;
      request.principal = keyPrincipal(record);
      request.session = null;
      return;
    }
    const session = await sessionOf(store, policy, request);
    if (!session) throw fail("unauthorized", { reason: "an API key is required" });
    assertCsrf(request, session);
    request.principal = await sessionPrincipal(store, session);
    request.apiKey = await store.security.webKeyOf(session.orgId);
    request.session = session;
  };
}

/**
 * Root onRequest hook: a query parameter given twice (`?page=1&page=2`) is ambiguous, and the route
 * schemas expect one string, so it is refused, naming the parameter, before anything else runs.
 */
export async function rejectRepeatedQuery(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(query ?? {}))
    if (Array.isArray(value))
      throw fail("invalid_request", { reason: `query parameter ${name} must be given once` }, name);
}
