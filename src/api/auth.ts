import { timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { authenticateKey } from "../domain/accounts.js";
import { DomainError, unauthorized } from "../domain/errors.js";
import type { SecurityPolicy } from "../domain/security/policy.js";
import { keyPrincipal, liveSession, sessionPrincipal } from "../domain/security/sessions.js";
import type { Principal } from "../domain/security/principal.js";
import type { ApiKeyRecord, SessionRecord, Store } from "../store/types.js";

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

type KeySource = (request: FastifyRequest) => string | undefined;

const header = (request: FastifyRequest, name: string): string | undefined => {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** v2: `?key=` or header `x-stl-key`, as the published client libraries send it. */
export const zoneApiKey: KeySource = (request) =>
  (request.query as { key?: string } | undefined)?.key ?? header(request, "x-stl-key");

/** counts v1: header `x-service-key` (vendor), or `x-stl-key` that other client code sends. */
export const countsApiKey: KeySource = (request) =>
  header(request, "x-service-key") ?? header(request, "x-stl-key");

/** Any of the key places (admin and session routes take a key only to refuse it with 403). */
export const anyApiKey: KeySource = (request) => zoneApiKey(request) ?? countsApiKey(request);

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const sameToken = (given: string, expected: string) =>
  given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));

/** The session of the request's cookie, or null. */
export function sessionOf(
  store: Store,
  policy: SecurityPolicy,
  request: FastifyRequest,
): SessionRecord | null {
  const id = request.cookies?.[SESSION_COOKIE];
  return id ? liveSession(store, policy, id) : null;
}

/**
 * A cookie is sent by the browser on its own, so a state-changing request made with one must also carry the
 * session's CSRF token, which only the page (same origin) can read.
 */
export function assertCsrf(request: FastifyRequest, session: SessionRecord): void {
  if (SAFE_METHODS.has(request.method)) return;
  const given = header(request, CSRF_HEADER);
  if (!given || !sameToken(given, session.csrfToken))
    throw new DomainError(
      403,
      "csrf_token_invalid",
      `this request needs the session's ${CSRF_HEADER} header`,
    );
}

/**
 * onRequest hook: an API key (exactly as the vendor interfaces define it) or a web-application session;
 * rejects with 401 before any body is parsed or work is done.
 */
export function requireApiKey(store: Store, source: KeySource, policy: SecurityPolicy) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const given = source(request);
    if (given) {
      const record = authenticateKey(store, given);
      if (!record) throw unauthorized("the API key is not valid");
      request.apiKey = record;
      request.principal = keyPrincipal(record);
      request.session = null;
      return;
    }
    const session = sessionOf(store, policy, request);
    if (!session) throw unauthorized("an API key is required");
    assertCsrf(request, session);
    request.principal = sessionPrincipal(store, session);
    request.apiKey = store.security.webKeyOf(session.orgId);
    request.session = session;
  };
}
