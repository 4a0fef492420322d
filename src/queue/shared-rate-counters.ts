import { Redis } from "ioredis";

/**
 * Rate-limit counters in Redis when STREETFLOW_REDIS_URL is set, so that every API process behind a load
 * balancer counts against the same per-minute limits (docs/security.md); undefined keeps them in memory.
 */
export function sharedRateCountersFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): { redis: Redis; nameSpace: string; close(): Promise<void> } | undefined {
  const url = env.STREETFLOW_REDIS_URL;
  if (!url) return undefined;
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
