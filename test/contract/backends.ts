import pg from "pg";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import type { AsyncStore } from "../../src/store/postgres/ports.js";

/**
 * The backends the port contract tests run against. Every test opens a fresh, empty store: SQLite in
 * memory; PostgreSQL in a database made for this test run (dropped at the end), its tables emptied
 * before each test. Without a reachable PostgreSQL its suite is skipped with a message, except under CI=true,
 * where that is a failure.
 */
export interface Backend {
  name: string;
  /** Why the suite does not run here, or undefined. */
  skip?: string;
  /** A fresh store; `clock` drives the job queue's leases. */
  open(options?: { clock?: () => number }): Promise<AsyncStore>;
  /** The same data, opened again as a new process would (a store over the same file or database). */
  reopen(store: AsyncStore, options?: { clock?: () => number }): Promise<AsyncStore>;
  /** Drops what the run created. */
  dispose(): Promise<void>;
}

const ADMIN_URL = process.env.STREETFLOW_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** SQLite's ports answer plain values; awaiting them gives the same results as the async ports. */
const sqliteAsAsync = (store: SqliteStore) => store as unknown as AsyncStore;

function sqliteBackend(): Backend {
  return {
    name: "sqlite",
    async open(options = {}) {
      return sqliteAsAsync(new SqliteStore(":memory:", options));
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
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (e) {
    const why = `PostgreSQL not reachable at ${ADMIN_URL} (${(e as Error).message})`;
    if (process.env.CI === "true") throw new Error(`${why}: CI runs the contract tests against it`);
    return {
      name: "postgres",
      skip: `${why}; set STREETFLOW_TEST_DATABASE_URL to run this suite`,
      open: () => Promise.reject(new Error("skipped")),
      reopen: () => Promise.reject(new Error("skipped")),
      dispose: async () => {},
    };
  }
  const database = `streetflow_test_${process.pid}_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = urlOf(ADMIN_URL, database);
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
