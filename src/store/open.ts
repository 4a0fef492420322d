import type { Store, StoreDescription } from "../app/ports/store.js";
import { fail } from "../domain/errors.js";

export type { StoreDescription };
import type { JobQueue } from "../app/ports/job-queue.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";

/** STREETFLOW_DATABASE_URL selects PostgreSQL; otherwise the SQLite file of the data directory. */
export function describeStore(sqliteFile: string, env = process.env): StoreDescription {
  const url = env.STREETFLOW_DATABASE_URL;
  return url ? { kind: "postgres", url } : { kind: "sqlite", file: sqliteFile };
}

/**
 * Opens the described store; `readonly` only affects SQLite (worker threads never write); `thread` opens
 * PostgreSQL with a worker thread's small pool (threadPoolSettingsFromEnv). The PostgreSQL and Redis clients
 * load only when configured: an SQLite deployment's commands start without them (docs/performance.md, "CLI start").
 */
export async function openStore(
  description: StoreDescription,
  options: { readonly?: boolean; thread?: boolean } = {},
): Promise<Store> {
  if (description.kind === "sqlite")
    return new SqliteStore(description.file, {
      readonly: options.readonly ?? false,
      // A thread's connection beside the process's own leaves the checkpoints to that one's thread.
      backgroundCheckpoints: !options.thread,
    });
  const { PostgresStore } = await import("./postgres/postgres-store.js");
  const { threadPoolSettingsFromEnv } = await import("./postgres/db.js");
  return await PostgresStore.open(
    description.url,
    options.thread ? { pool: threadPoolSettingsFromEnv() } : {},
  );
}

/**
 * The store with its job queue on Redis when STREETFLOW_REDIS_URL is set (key prefix
 * STREETFLOW_REDIS_PREFIX; STREETFLOW_REDIS_STALLED_CHECK_MS: how often ended leases are looked for),
 * else the store's own queue. With Redis, creating an analysis and
 * enqueueing its job are no longer one transaction: a job whose analysis is missing is skipped.
 */
export async function withQueueFromEnv(store: Store, env = process.env): Promise<Store> {
  const url = env.STREETFLOW_REDIS_URL;
  if (!url) return store;
  const { BullJobQueue } = await import("../queue/bullmq/job-queue.js");
  const queue: JobQueue & { close(): Promise<void> } = new BullJobQueue({
    url,
    prefix: env.STREETFLOW_REDIS_PREFIX,
    stalledCheckMs: stalledCheckOf(env.STREETFLOW_REDIS_STALLED_CHECK_MS),
  });
  return new Proxy(store, {
    get(target, key) {
      if (key === "jobs") return queue;
      if (key === "close")
        return async () => {
          await queue.close();
          await target.close();
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function stalledCheckOf(value: string | undefined): number | undefined {
  if (!value?.trim()) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 100)
    throw fail(
      "invalid_option",
      { reason: "STREETFLOW_REDIS_STALLED_CHECK_MS must be a whole number of milliseconds, at least 100" },
      "STREETFLOW_REDIS_STALLED_CHECK_MS",
    );
  return n;
}
