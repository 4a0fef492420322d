import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import type { Store } from "../../src/app/ports/store.js";
import type { JobQueue } from "../../src/app/ports/job-queue.js";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { reachPostgres, reachRedis, TEST_DATABASE_URL, TEST_REDIS_URL } from "../helpers/distributed.js";

/**
 * The backends the port contract tests run against. Every test opens a fresh, empty store: SQLite in
 * memory; PostgreSQL in a database made for this test run (dropped at the end), its tables emptied
 * before each test. Without a reachable PostgreSQL its suite is skipped with a message, except under CI=true,
 * where that is a failure (test/helpers/distributed.ts).
 */
export interface Backend {
  name: string;
  /** Why the suite does not run here, or undefined. */
  skip?: string;
  /** A fresh store; `clock` drives the job queue's leases. */
  open(options?: { clock?: () => number }): Promise<Store>;
  /** The same data, opened again as a new process would (a store over the same file or database). */
  reopen(store: Store, options?: { clock?: () => number }): Promise<Store>;
  /** Drops what the run created. */
  dispose(): Promise<void>;
}

function sqliteBackend(): Backend {
  return {
    name: "sqlite",
    async open(options = {}) {
      return new SqliteStore(":memory:", options);
    },
    async reopen(store) {
      return store;
    },
    async dispose() {},
  };
}

/** A URL like `base` for another database. */
function urlOf(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

async function postgresBackend(): Promise<Backend> {
  const reached = await reachPostgres("the contract tests");
  if (reached.skip !== undefined)
    return {
      name: "postgres",
      skip: reached.skip,
      open: () => Promise.reject(new Error("skipped")),
      reopen: () => Promise.reject(new Error("skipped")),
      dispose: async () => {},
    };
  const admin = reached.client;
  const database = `streetflow_test_${process.pid}_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = urlOf(TEST_DATABASE_URL, database);
  const stores: PostgresStore[] = [];
  const openStore = async (options: { clock?: () => number }) => {
    const store = await PostgresStore.open(url, { ...options, pool: { max: 4 } });
    stores.push(store);
    return store;
  };
  const closeAll = () => Promise.all(stores.splice(0).map((s) => s.close()));
  return {
    name: "postgres",
    // Migrated once per run; each test then starts from emptied tables (DELETE: much faster than a new schema or TRUNCATE).
    async open(options = {}) {
      await closeAll();
      const store = await openStore(options);
      await store.db.run(`DO $$ DECLARE t text; BEGIN
        SET LOCAL session_replication_role = replica; -- no foreign-key checks while emptying
        FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema()
          AND tablename <> 'streetflow_migrations' LOOP EXECUTE format('DELETE FROM %I', t); END LOOP; END $$`);
      return store;
    },
    async reopen(store, options = {}) {
      await closeAll();
      return openStore(options);
    },
    async dispose() {
      await closeAll();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Both backends; the caller disposes of them after its tests. */
export async function backends(): Promise<Backend[]> {
  return [sqliteBackend(), await postgresBackend()];
}

/**
 * A job queue backend: the store's own queue (SQLite, PostgreSQL), whose leases follow an injected
 * clock, or BullMQ on Redis, whose leases are Redis key expiries in real time.
 */
export interface QueueBackend {
  name: string;
  skip?: string;
  /** A fresh, empty queue; `passTime(ms, probe)` lets leases age by `ms`, then answers `probe()` once it is not null. */
  open(): Promise<{
    queue: JobQueue;
    passTime<T>(ms: number, probe: () => Promise<T | null>): Promise<T | null>;
    /** True when time is the test's: the queue's notion of "now" is exact. */
    exactClock: boolean;
  }>;
  /** The same queue opened again as another process would. */
  reopen(queue: JobQueue): Promise<JobQueue>;
  dispose(): Promise<void>;
}

function storeQueue(backend: Backend): QueueBackend {
  const opened = new Map<JobQueue, { store: Store; clock: { now: number } }>();
  return {
    name: backend.name,
    skip: backend.skip,
    async open() {
      const clock = { now: 1_000_000 };
      const store = await backend.open({ clock: () => clock.now });
      opened.set(store.jobs, { store, clock });
      return {
        queue: store.jobs,
        exactClock: true,
        async passTime(ms, probe) {
          clock.now += ms;
          return probe();
        },
      };
    },
    async reopen(queue) {
      const { store, clock } = opened.get(queue)!;
      return (await backend.reopen(store, { clock: () => clock.now })).jobs;
    },
    dispose: () => backend.dispose(),
  };
}

async function bullBackend(): Promise<QueueBackend> {
  const reached = await reachRedis("the contract tests");
  if (reached.skip !== undefined) {
    const skipped = () => Promise.reject(new Error("skipped"));
    return { name: "bullmq", skip: reached.skip, open: skipped, reopen: skipped, dispose: async () => {} };
  }
  reached.client.disconnect();
  const queues: BullJobQueue[] = [];
  const prefixOf = new Map<JobQueue, string>();
  const run = `sf-test-${process.pid}-${Date.now().toString(36)}`;
  let n = 0;
  const openQueue = (prefix: string) => {
    const queue = new BullJobQueue({ url: TEST_REDIS_URL, prefix, stalledCheckMs: 100 });
    queues.push(queue);
    prefixOf.set(queue, prefix);
    return queue;
  };
  return {
    name: "bullmq",
    async open() {
      const queue = openQueue(`${run}-${++n}`);
      return {
        queue,
        exactClock: false,
        async passTime(ms, probe) {
          // Real time: the lease runs out, then BullMQ's stalled check (every 100 ms) puts the job back.
          const until = Date.now() + ms + 30_000;
          await new Promise((r) => setTimeout(r, ms));
          for (;;) {
            const found = await probe();
            if (found !== null || Date.now() > until) return found;
            await new Promise((r) => setTimeout(r, 50));
          }
        },
      };
    },
    async reopen(queue) {
      return openQueue(prefixOf.get(queue)!);
    },
    async dispose() {
      for (const q of queues.splice(0)) await q.destroy().catch(() => q.close());
    },
  };
}

/** The store queues of every backend and the BullMQ queue. */
export async function queueBackends(): Promise<QueueBackend[]> {
  return [...(await backends()).map(storeQueue), await bullBackend()];
}
