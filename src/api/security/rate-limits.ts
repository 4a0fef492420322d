import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { retryLater } from "../../domain/errors.js";
import type { Store } from "../../app/ports/store.js";
import type { RateLimits } from "./options.js";

/** The counter a request counts against: its key, its session, or (neither) its client address. */
function subjectOf(request: FastifyRequest): string {
  if (request.session) return `session:${request.session.idHash}`;
  if (request.principal) return `key:${request.principal.keyId}`;
  return `ip:${request.ip}`;
}

/**
 * Requests per minute per key, per session and per address (@fastify/rate-limit). It runs as a preHandler,
 * after authentication, so it knows the key; an admin's limit on a key replaces the default. Over the limit:
 * 429 with Retry-After, in the usual error body.
 */
export async function registerRateLimits(
  app: FastifyInstance,
  store: Store,
  limits: RateLimits,
): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: "preHandler",
    timeWindow: 60_000,
    redis: limits.shared?.redis,
    nameSpace: limits.shared?.nameSpace,
    // A Redis outage lets requests through rather than failing them all.
    skipOnError: true,
    keyGenerator: subjectOf,
    max: async (request) => {
      if (!request.principal) return limits.perAddress;
      const own = await store.security.rateLimitOf(request.principal.keyId);
      return own ?? (request.session ? limits.perSession : limits.perKey);
    },
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return retryLater("rate_limited", { max: context.max, seconds }, seconds);
    },
  });
}
