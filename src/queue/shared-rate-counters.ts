import type { Redis } from "ioredis";

/** Counters under `nameSpace` in Redis; `close` ends the connection. */
export interface RedisRateCounters {
  redis: Redis;
  nameSpace: string;
  close(): Promise<void>;
}

/**
 * Rate-limit counters in Redis when STREETFLOW_REDIS_URL is set, so that every API process behind a load
 * balancer counts against the same per-minute limits (docs/security.md); undefined keeps them in memory.
 * The Redis client loads only then: an embedded deployment's `serve` starts without it.
 */
export async function sharedRateCountersFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<RedisRateCounters | undefined> {
  const url = env.STREETFLOW_REDIS_URL;
  if (!url) return undefined;
  const { Redis } = await import("ioredis");
  // One try per command: a request is never held up by a Redis outage (the limiter then lets it pass).
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000, enableOfflineQueue: false });
  return {
    redis,
    nameSpace: `${env.STREETFLOW_REDIS_PREFIX ?? "streetflow"}:rate:`,
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
