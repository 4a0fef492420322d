/**
 * `npm run bench -- scale ingest [tripsPerDay=200] [workers=1,2] [chunkTrips=500] [files=1]`: a simulated
 * month of Monaco traces (as one file, or as `files` files of consecutive days) ingested into PostgreSQL,
 * first by one `streetflow ingest` process matching on one thread (`--chunk-trips 0 --threads 1`, the
 * baseline), then in chunks by 1, 2, … `serve --role worker --job-workers 1` processes on Redis, each run
 * into a fresh database.
 *
 * Per run: wall time of the command, its own CPU time (bash `time`: reading, splitting, queueing) and each
 * worker's CPU time over the run (/proc), the CPU critical path (the busiest process) and the digest of
 * what was stored (test/helpers/store-digest.ts), which must be the same for every run. On a loaded
 * machine wall times say little; `cpuSpeedUp` (the baseline's CPU over a run's critical path) is what
 * idle cores would give at most.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { MONACO_PBF } from "../../test/helpers/bundled-data.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { storeDigest } from "../../test/helpers/store-digest.js";
import { inDayFiles } from "../lib/day-files.js";
import { cpuSecondsOf, startWorker, stopWorker } from "./analysis.js";

const PG_URL = process.env.STREETFLOW_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.STREETFLOW_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const CLI = new URL("../../src/cli/index.ts", import.meta.url).pathname;
const MONTH = "2025-03";

export default async function scaleIngest(args: string[]): Promise<Record<string, unknown>> {
  const tripsPerDay = Number(args[0] ?? 200);
  const workerCounts = (args[1] ?? "1,2").split(",").map(Number);
  const chunkTrips = Number(args[2] ?? 500);
  const files = Number(args[3] ?? 1);
  const dir = mkdtempSync(join(tmpdir(), "sf-bench-scale-ingest-"));
  try {
    const sqliteEnv = { STREETFLOW_DATA_DIR: dir, STREETFLOW_DATABASE_URL: "", STREETFLOW_REDIS_URL: "" };
    await command(["import-osm", MONACO_PBF, "--country", "mc"], sqliteEnv);
    const sim = join(dir, "sim");
    await command(
      ["simulate", "--country", "mc", "--from", MONTH, "--to", MONTH, "--trips-per-day", String(tripsPerDay)],
      sqliteEnv,
      ["--seed", "3", "--source", "lbs", "--out", sim],
    );
    const traces = inDayFiles(join(sim, `traces-${MONTH}.csv`), files);
    const runs = [await measure(traces, dir, 0, 0)];
    for (const workers of workerCounts) runs.push(await measure(traces, dir, workers, chunkTrips));
    const baselineCpu = runs[0].criticalCpuS;
    return {
      traces: `${MONTH}, ${tripsPerDay} trips a day, ${traces.length} file(s)`,
      chunkTrips,
      runs: runs.map((r) => ({ ...r, cpuSpeedUp: round(baselineCpu / r.criticalCpuS) })),
      sameData: new Set(runs.map((r) => r.digestSha1)).size === 1,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One ingest into a fresh database: by the command alone (workers 0) or in chunks by `workers` workers. */
async function measure(traces: string[], dir: string, workers: number, chunkTrips: number) {
  const database = `streetflow_bench_ingest_${process.pid}_${workers}`;
  const url = await freshDatabase(database);
  const prefix = `sf-bench-ingest-${process.pid}-${workers}`;
  const env = {
    STREETFLOW_DATA_DIR: dir,
    STREETFLOW_DATABASE_URL: url,
    STREETFLOW_REDIS_URL: REDIS_URL,
    STREETFLOW_REDIS_PREFIX: prefix,
  };
  await command(["import-osm", MONACO_PBF, "--country", "mc"], env);
  const processes = await Promise.all(
    Array.from({ length: workers }, () => startWorker({ url, prefix, shardTrips: 0 })),
  );
  try {
    const load = loadavg()[0];
    const before = processes.map((p) => cpuSecondsOf(p.pid!));
    const started = performance.now();
    const own = await command(
      ["ingest", ...traces, "--country", "mc", "--source", "lbs", "--threads", "1"],
      env,
      ["--chunk-trips", String(chunkTrips)],
    );
    const wallS = (performance.now() - started) / 1000;
    const cpu = processes.map((p, i) => cpuSecondsOf(p.pid!) - before[i]);
    const store = await PostgresStore.open(url, { pool: { max: 2 } });
    const digest = await storeDigest(store, "mc");
    await store.close();
    return {
      workers,
      chunks: workers === 0 ? 0 : chunksQueued(dir),
      trips: digest.trips,
      wallS: round(wallS),
      commandCpuS: round(own),
      workerCpuS: cpu.map(round),
      criticalCpuS: round(Math.max(own, ...cpu)),
      loadAvg1m: round(load),
      digestSha1: createHash("sha1").update(JSON.stringify(digest)).digest("hex").slice(0, 12),
    };
  } finally {
    await Promise.all(processes.map(stopWorker));
    await dropDatabase(database);
    await new BullJobQueue({ url: REDIS_URL, prefix }).destroy();
  }
}

/** The chunks the last ingest command queued, from its progress lines (`chunks: 12/12 done, …`). */
function chunksQueued(dir: string): number {
  const done = [...readFileSync(join(dir, "command.log"), "utf8").matchAll(/chunks: \d+\/(\d+) done/g)];
  return Number(done.at(-1)?.[1] ?? 0);
}

/** Runs the CLI under bash's `time`; answers its user + system CPU seconds. */
function command(args: string[], env: Record<string, string>, more: string[] = []): Promise<number> {
  const line = ["node", "--import", "tsx", CLI, ...args, ...more].map((a) => `'${a}'`).join(" ");
  const log = join(env.STREETFLOW_DATA_DIR, "command.log");
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `TIMEFORMAT='%U %S'; time ${line} >'${log}' 2>&1`], {
      env: { ...process.env, ...env },
    });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.once("exit", (code) => {
      if (code !== 0)
        return reject(new Error(`streetflow ${args.join(" ")} exited ${code}: ${readFileSync(log, "utf8")}`));
      const [user, sys] = err.trim().split("\n").at(-1)!.split(" ").map(Number);
      resolve(user + sys);
    });
  });
}

async function freshDatabase(database: string): Promise<string> {
  await dropDatabase(database);
  await admin(`CREATE DATABASE ${database}`);
  return Object.assign(new URL(PG_URL), { pathname: `/${database}` }).toString();
}

const dropDatabase = (database: string) => admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const round = (x: number) => Number(x.toFixed(2));
