import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Redis } from "ioredis";

/**
 * A PostgreSQL database and a Redis key prefix of this test run, for processes started with `env`;
 * both are removed by `dispose`. Without a reachable server the caller skips with `skip` (a message),
 * except under CI=true, where that is an error (as for every suite that needs them: `reach` below).
 */
export interface DistributedServices {
  env: { STREETFLOW_DATABASE_URL: string; STREETFLOW_REDIS_URL: string; STREETFLOW_REDIS_PREFIX: string };
  hasTable(name: string): Promise<boolean>;
  dispose(): Promise<void>;
}

/** The test run's PostgreSQL (an admin connection to it makes and drops databases) and Redis. */
export const TEST_DATABASE_URL =
  process.env.STREETFLOW_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const TEST_REDIS_URL = process.env.STREETFLOW_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A service client, or why the suite is skipped (the service is not reachable here). */
export type Reached<T> = { client: T; skip?: undefined } | { client?: undefined; skip: string };

/**
 * Connects to the service, or answers why `suite` is skipped when it is not reachable; under CI=true,
 * where every suite must run, that throws instead.
 */
async function reach<T>(
  connect: () => Promise<T>,
  service: { name: string; url: string; variable: string },
  suite: string,
): Promise<Reached<T>> {
  try {
    return { client: await connect() };
  } catch (e) {
    const why = `${service.name} not reachable at ${service.url} (${(e as Error).message})`;
    if (process.env.CI === "true") throw new Error(`${why}: CI runs ${suite} against it`);
    return { skip: `${why}; set ${service.variable} to run ${suite}` };
  }
}

/** An admin connection to the test PostgreSQL (the caller ends it), or why `suite` is skipped. */
export async function reachPostgres(suite: string): Promise<Reached<pg.Client>> {
  const connect = async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3000 });
    await client.connect().catch(async (e: unknown) => {
      await client.end().catch(() => {});
      throw e;
    });
    return client;
  };
  const service = { name: "PostgreSQL", url: TEST_DATABASE_URL, variable: "STREETFLOW_TEST_DATABASE_URL" };
  return await reach(connect, service, suite);
}

/** A connection to the test Redis (the caller disconnects it), or why `suite` is skipped. */
export async function reachRedis(suite: string): Promise<Reached<Redis>> {
  const connect = async () => {
    const redis = new Redis(TEST_REDIS_URL, {
      lazyConnect: true,
      connectTimeout: 2000,
      maxRetriesPerRequest: 0,
    });
    try {
      await redis.connect();
      await redis.ping();
      return redis;
    } catch (e) {
      redis.disconnect();
      throw e;
    }
  };
  const service = { name: "Redis", url: TEST_REDIS_URL, variable: "STREETFLOW_TEST_REDIS_URL" };
  return await reach(connect, service, suite);
}

/** Why `suite` is skipped here (PostgreSQL not reachable), or undefined. */
export async function postgresSkip(suite: string): Promise<string | undefined> {
  const admin = await reachPostgres(suite);
  await admin.client?.end();
  return admin.skip;
}

/** Why `suite` is skipped here (PostgreSQL or Redis not reachable), or undefined. */
export async function servicesSkip(suite: string): Promise<string | undefined> {
  const skip = await postgresSkip(suite);
  if (skip !== undefined) return skip;
  const redis = await reachRedis(suite);
  redis.client?.disconnect();
  return redis.skip;
}

export async function openDistributedServices(): Promise<
  (DistributedServices & { skip?: undefined }) | { skip: string }
> {
  const suite = "the distributed tests";
  const reached = await reachPostgres(suite);
  if (reached.skip !== undefined) return { skip: reached.skip };
  const admin = reached.client;
  const reachedRedis = await reachRedis(suite);
  if (reachedRedis.skip !== undefined) {
    await admin.end();
    return { skip: reachedRedis.skip };
  }
  const redis = reachedRedis.client;
  const run = `${process.pid}_${Date.now().toString(36)}`;
  const database = `streetflow_e2e_${run}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${database}`;
  const prefix = `sf-e2e-${run}`;
  return {
    env: {
      STREETFLOW_DATABASE_URL: url.toString(),
      STREETFLOW_REDIS_URL: TEST_REDIS_URL,
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

export { exitOf, stopProcess } from "./stop-process.js";
