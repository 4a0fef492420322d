import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Redis } from "ioredis";

/**
 * A PostgreSQL database and a Redis key prefix of this test run, for processes started with `env`;
 * both are removed by `dispose`. Without a reachable server the caller skips with `skip` (a message),
 * except under CI=true, where that is an error (as in test/contract/backends.ts).
 */
export interface DistributedServices {
  env: { STREETFLOW_DATABASE_URL: string; STREETFLOW_REDIS_URL: string; STREETFLOW_REDIS_PREFIX: string };
  hasTable(name: string): Promise<boolean>;
  dispose(): Promise<void>;
}

const ADMIN_URL = process.env.STREETFLOW_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.STREETFLOW_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export async function openDistributedServices(): Promise<
  (DistributedServices & { skip?: undefined }) | { skip: string }
> {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0 });
  try {
    await admin.connect();
    await redis.connect();
    await redis.ping();
  } catch (e) {
    await admin.end().catch(() => {});
    redis.disconnect();
    const why = `PostgreSQL (${ADMIN_URL}) or Redis (${REDIS_URL}) not reachable: ${(e as Error).message}`;
    if (process.env.CI === "true") throw new Error(`${why}; CI runs the distributed test against them`);
    return { skip: `${why}; set STREETFLOW_TEST_DATABASE_URL / STREETFLOW_TEST_REDIS_URL to run it` };
  }
  const run = `${process.pid}_${Date.now().toString(36)}`;
  const database = `streetflow_e2e_${run}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const prefix = `sf-e2e-${run}`;
  return {
    env: {
      STREETFLOW_DATABASE_URL: url.toString(),
      STREETFLOW_REDIS_URL: REDIS_URL,
      STREETFLOW_REDIS_PREFIX: prefix,
    },
    async hasTable(name) {
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      try {
        const found = await db.query("SELECT 1 FROM pg_tables WHERE tablename = $1", [name]);
        return found.rowCount === 1;
      } finally {
        await db.end();
      }
    },
    async dispose() {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
      for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 }))
        if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
      redis.disconnect();
    },
  };
}

const CLI = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));

/** A `serve --role worker` process and everything it printed so far. */
export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
}

/** Starts `streetflow serve --role worker --job-workers 1`; resolves once its runners poll. */
export async function startWorkerProcess(dataDir: string, env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "serve", "--role", "worker", "--job-workers", "1"],
    { env: { ...process.env, STREETFLOW_DATA_DIR: dataDir, ...env } },
  );
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (out += b));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", () => out.includes("Streetflow worker:") && resolve());
    child.once("exit", (code) => reject(new Error(`worker exited with ${code}:\n${out}`)));
  });
  return { child, output: () => out };
}

/** Resolves with the exit code once the process has ended (at once if it has). */
export const exitOf = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
