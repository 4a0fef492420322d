import type { Redis } from "ioredis";
import { DEFAULT_SECURITY_POLICY, type SecurityPolicy } from "../../domain/security/policy.js";

/** Requests per minute; a key's own limit (set by an admin) replaces `perKey` for that key. */
export interface RateLimits {
  perKey: number;
  /** Per signed-in session, unless the organization's web-app key has its own limit. */
  perSession: number;
  /** Per client address for requests without key or session (pages, sign-in). */
  perAddress: number;
  /**
   * Where the counters live: in this process's memory by default; in Redis (under `nameSpace`) to share
   * them between several API processes (`serve` does when STREETFLOW_REDIS_URL is set).
   */
  shared?: SharedRateCounters;
}

export interface SharedRateCounters {
  redis: Redis;
  nameSpace: string;
}

export interface SecurityOptions {
  policy: SecurityPolicy;
  rateLimits: RateLimits;
  /**
   * Behind a reverse proxy that terminates HTTPS, set this (Fastify's trustProxy: true, or the
   * proxy's addresses) so the client address and `X-Forwarded-Proto` are taken from the proxy's headers:
   * the session cookie is then marked Secure, and lockouts and limits count per real client.
   */
  trustProxy: boolean | string | string[];
}

export const DEFAULT_RATE_LIMITS: RateLimits = { perKey: 600, perSession: 600, perAddress: 300 };

export interface SecurityOverrides {
  policy?: Partial<SecurityPolicy>;
  rateLimits?: Partial<RateLimits>;
  trustProxy?: SecurityOptions["trustProxy"];
}

export function securityOptions(overrides: SecurityOverrides = {}): SecurityOptions {
  return {
    policy: { ...DEFAULT_SECURITY_POLICY, ...overrides.policy },
    rateLimits: { ...DEFAULT_RATE_LIMITS, ...overrides.rateLimits },
    trustProxy: overrides.trustProxy ?? false,
  };
}
