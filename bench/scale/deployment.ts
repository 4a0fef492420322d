/**
 * The deployment `scale counts` and `scale shed` serve bench/counts.ts's Liechtenstein store from:
 * - `sqlite`: a copy of the cached SQLite file in a temp data directory (one process, or several on one
 *   file);
 * - `postgres`: a distributed deployment, PostgreSQL (STREETFLOW_DATABASE_URL) + Redis
 *   (STREETFLOW_REDIS_URL, a key prefix of this run). The counts are copied once, packed rows as they
 *   are, into the database `streetflow_bench_scale_counts_li` (kept between runs, as bench/scale/analysis.ts
 *   keeps its trips); `STREETFLOW_BENCH_DATABASE_URL` / `STREETFLOW_BENCH_REDIS_URL` choose the servers.
 * Each hands out API keys of fresh organizations and the environment of `serve --role api` processes.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { issueApiKey } from "../../src/app/accounts.js";
import type { Store } from "../../src/app/ports/store.js";
import type { Network } from "../../src/engine/network/network.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { mergedPackedRows } from "../../src/store/sqlite/counts.js";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";

export const BACKENDS = ["sqlite", "postgres"] as const;
export type Backend = (typeof BACKENDS)[number];

const PG_URL = process.env.STREETFLOW_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.STREETFLOW_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const DATABASE = "streetflow_bench_scale_counts_li";
/** Packed rows copied per INSERT. */
const COPY_BATCH = 2_000;

export interface Deployment {
  backend: Backend;
  /** STREETFLOW_DATA_DIR of the servers. */
  dataDir: string;
  /** What `serve --role api` needs besides the data directory. */
  env: Record<string, string>;
  /** API keys of `count` new organizations. */
  newKeys(count: number): Promise<string[]>;
  /** Removes what this run made (the PostgreSQL database stays). */
  dispose(): Promise<void>;
}

/** `backend=sqlite,postgres` style arguments: the backends named, in order. */
export function backendsOf(value: string): Backend[] {
  const names = value.split(",").filter(Boolean);
  for (const n of names)
    if (!(BACKENDS as readonly string[]).includes(n))
      throw new Error(`backend=${n}: one of ${BACKENDS.join(", ")}`);
  return names as Backend[];
}

export async function deploy(
  backend: Backend,
  source: { file: string; network: Network },
): Promise<Deployment> {
  const dataDir = mkdtempSync(join(tmpdir(), `streetflow-bench-scale-${backend}-`));
  if (backend === "sqlite") {
    const file = join(dataDir, "streetflow.db");
    copyFileSync(source.file, file);
    return {
      backend,
      dataDir,
      env: {},
      newKeys: async (count) => await withStore(new SqliteStore(file), (s) => keysOf(s, count)),
      dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const url = await countsDatabase(source.file);
  const prefix = `sf-bench-counts-${process.pid}`;
  return {
    backend,
    dataDir,
    env: {
      STREETFLOW_DATABASE_URL: url,
      STREETFLOW_REDIS_URL: REDIS_URL,
      STREETFLOW_REDIS_PREFIX: prefix,
    },
    newKeys: async (count) => await withStore(await PostgresStore.open(url), (s) => keysOf(s, count)),
    dispose: async () => {
      await new BullJobQueue({ url: REDIS_URL, prefix }).destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function withStore<T>(store: Store, fn: (store: Store) => Promise<T>): Promise<T> {
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Keys of as many organizations: the offered load comes from many clients, not one flooding key. */
async function keysOf(store: Store, count: number): Promise<string[]> {
  const keys = [];
  for (let i = 0; i < count; i++) {
    const org = await store.accounts.createOrganization(`bench-scale-${crypto.randomUUID()}`);
    keys.push((await issueApiKey(store, org.id)).key);
  }
  return keys;
}

/**
 * The bench database with the SQLite cache's network and packed counts, copied when missing or
 * incomplete (the network is written last: its presence marks a complete copy).
 */
async function countsDatabase(sqliteFile: string): Promise<string> {
  const url = Object.assign(new URL(PG_URL), { pathname: `/${DATABASE}` }).toString();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
    if (exists.rowCount === 1) {
      const complete = await withStore(
        await PostgresStore.open(url),
        async (s) => (await s.network.countries()).length > 0,
      );
      if (complete) return url;
      await admin.query(`DROP DATABASE ${DATABASE} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
  const source = new SqliteStore(sqliteFile, { readonly: true });
  const target = await PostgresStore.open(url);
  try {
    for (const table of ["segment_month_totals", "segment_month_details"] as const)
      await copyPacked(source, target, table);
    await target.segmentStats.rebuildYearRollups();
    for (const info of await source.network.countries())
      await target.network.replaceCountry(info, await source.network.loadSegments(info.country));
  } finally {
    await source.close();
    await target.close();
  }
  return url;
}

async function copyPacked(
  source: SqliteStore,
  target: PostgresStore,
  table: "segment_month_totals" | "segment_month_details",
): Promise<void> {
  // Each segment-month's parts merged into the one row PostgreSQL's layout keeps.
  const rows = [...mergedPackedRows(source.db, table)];
  for (let from = 0; from < rows.length; from += COPY_BATCH) {
    const batch = rows.slice(from, from + COPY_BATCH);
    await target.db.run(
      `INSERT INTO ${table} (country, segment_id, month, cells)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bytea[])`,
      [0, 1, 2, 3].map((column) => batch.map((row) => row[column])),
    );
  }
}
