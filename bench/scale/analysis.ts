/**
 * `npm run bench -- scale analysis [trips=1000000] [zones=1000] [workers=1,2,4] [shardTrips=250000]`:
 * one OD_Analysis (the bench/analysis.ts grid and request) on PostgreSQL + Redis, computed by 1, 2 and 4
 * worker processes (`node dist/cli/index.js serve --role worker --job-workers 1`), split into shard jobs (BullMQ
 * flows); first computed whole by one worker (STREETFLOW_SHARD_TRIPS=0) as the baseline.
 *
 * Per run: wall time from creating the analysis to Data Available, each worker's CPU time over that span
 * (/proc utime + stime, worker threads included), the CPU of the PostgreSQL server's processes serving the
 * bench database (`pgCpuS`: its backends, found in pg_stat_activity while the run lasts; `pgCpuByStatement`:
 * that CPU by the statement each backend ran when sampled, literals left out), and two CPU
 * critical paths: the busiest worker's CPU seconds (`criticalCpuS`), and `cpuPathS`, the larger of that
 * and all the CPU (workers + PostgreSQL) spread over the machine's cores, what an idle machine's wall
 * time cannot go below. On a loaded machine wall times say little; `cpuSpeedUp` (1 worker's CPU over the
 * N-worker critical path, both sharded) is what N idle cores would give at most, and `vsWhole` holds the
 * speed-ups over the whole run in 1 worker (the baseline of issue 15's target): wall, and cpuPathS.
 * The CSV digest must be the same for every run.
 *
 * The workers run from dist/ (built first when a source changed), as a deployment runs them;
 * STREETFLOW_BENCH_TSX=1 runs them under tsx. STREETFLOW_BENCH_WORKER_NODE_ARGS adds node options to
 * the worker processes (e.g. `--cpu-prof`); STREETFLOW_BENCH_LOG names a file that gets their output,
 * each line with the seconds since its process started.
 *
 * The trips come from the bench/analysis SQLite cache (built on first use) and are copied once into the
 * database `streetflow_bench_scale_<trips>` (kept between runs).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Network } from "../../src/engine/network/network.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { columnsToTrips } from "../../src/engine/trips/columns.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import type { Store } from "../../src/app/ports/store.js";
import { createAnalysis } from "../../src/app/analyses/lifecycle.js";
import { DEFAULT_SHARD_TRIPS } from "../../src/app/analyses/shards.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { sharedDataFile } from "../../test/helpers/shared-data.js";
import { buildIfChanged, startBuild } from "../../scripts/build-if-changed.js";
import { COUNTRY, defineAnalysis, EXTRACT, openTripStore } from "../analysis.js";

const PG_URL = process.env.STREETFLOW_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.STREETFLOW_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const ROOT = new URL("../../", import.meta.url).pathname;
/**
 * Workers run as a deployment runs them (`npm start`, scripts/cluster.sh): the built JavaScript of
 * dist/, built first when a source changed. STREETFLOW_BENCH_TSX=1 runs them from the TypeScript sources
 * under tsx instead, whose loader costs each process and each worker thread CPU of its own (a thread of
 * hooks beside it, modules transpiled or read from tsx's cache), about 3 s a worker process.
 */
const UNDER_TSX = process.env.STREETFLOW_BENCH_TSX === "1";
const CLI = UNDER_TSX
  ? ["--import", "tsx", join(ROOT, "src/cli/index.ts")]
  : [join(ROOT, "dist/cli/index.js")];
let built: Promise<unknown> | undefined;
const CLOCK_TICKS = 100;
const WORKER_NODE_ARGS = (process.env.STREETFLOW_BENCH_WORKER_NODE_ARGS ?? "").split(" ").filter(Boolean);

export default async function scaleAnalysis(args: string[]): Promise<Record<string, unknown>> {
  const trips = Number(args[0] ?? 1_000_000);
  const zones = Number(args[1] ?? 1000);
  const workerCounts = (args[2] ?? "1,2,4").split(",").map(Number);
  const shardTrips = Number(args[3] ?? DEFAULT_SHARD_TRIPS);
  const file = sharedDataFile(EXTRACT);
  if (!file) return { skipped: `shared data absent: ${EXTRACT}` };
  const network = new Network(COUNTRY, await readOsmSegments(file));
  const setupStarted = performance.now();
  const url = await databaseWithTrips(network, trips);
  const store = await PostgresStore.open(url);
  const setupS = (performance.now() - setupStarted) / 1000;
  const prefix = `sf-bench-scale-${process.pid}`;
  const queue = new BullJobQueue({ url: REDIS_URL, prefix });
  const api: Store = new Proxy(store, {
    get: (target, key) => (key === "jobs" ? queue : Reflect.get(target, key, target)),
  });
  const networks = new NetworkRegistry(async (c) => await store.network.loadSegments(c));
  const env = { url, prefix };
  try {
    const runs = [];
    const baseline = await measure(api, networks, network, zones, 1, 0, env);
    runs.push(baseline);
    for (const workers of workerCounts)
      runs.push(await measure(api, networks, network, zones, workers, shardTrips, env));
    const oneWorker = runs.find((r) => r.workers === 1 && r.shards > 0);
    return {
      network: `${EXTRACT}, ${network.size} segments`,
      trips: await store.trips.countTrips(COUNTRY),
      zones,
      shardTrips,
      setupS: Number(setupS.toFixed(1)),
      runs: runs.map((r) => ({
        ...r,
        wallSpeedUp: oneWorker ? Number((oneWorker.wallS / r.wallS).toFixed(2)) : null,
        cpuSpeedUp: oneWorker ? Number((oneWorker.criticalCpuS / r.criticalCpuS).toFixed(2)) : null,
        vsWhole: {
          wall: Number((baseline.wallS / r.wallS).toFixed(2)),
          cpuPath: Number((baseline.cpuPathS / r.cpuPathS).toFixed(2)),
        },
      })),
      sameCsvs: new Set(runs.map((r) => r.metricsSha1)).size === 1,
    };
  } finally {
    await queue.destroy();
    await store.close();
  }
}

/** One analysis computed by `workers` worker processes; shardTrips 0: whole. */
async function measure(
  api: Store,
  networks: NetworkRegistry,
  network: Network,
  zones: number,
  workers: number,
  shardTrips: number,
  env: { url: string; prefix: string },
) {
  const processes = await Promise.all(
    Array.from({ length: workers }, () => startWorker({ ...env, shardTrips })),
  );
  try {
    const { spec } = await defineAnalysis(api, networks, network, zones, "OD_Analysis");
    const load = loadavg()[0];
    const server = await BackendCpu.start(env.url);
    const cpuBefore = processes.map((p) => cpuSecondsOf(p.pid!));
    const started = performance.now();
    await createAnalysis(api, spec);
    const done = await settled(api, spec.uuid, () => server.sample());
    const wallS = (performance.now() - started) / 1000;
    const cpu = processes.map((p, i) => cpuSecondsOf(p.pid!) - cpuBefore[i]);
    const { seconds: pgCpuS, byStatement: pgCpuByStatement } = await server.stop();
    if (done.state !== "done") throw new Error(`the analysis ended ${done.state}: ${done.failureReason}`);
    const hash = createHash("sha1");
    for (const metric of [...done.metrics].sort())
      hash.update(metric).update((await api.analyses.result(spec.uuid, metric)) ?? "");
    const shards = Number(/split into (\d+) shards/.exec(processes.map((p) => p.out).join("\n"))?.[1] ?? 0);
    return {
      workers,
      shards,
      wallS: round(wallS),
      cpuS: cpu.map(round),
      totalCpuS: round(cpu.reduce((a, b) => a + b, 0)),
      criticalCpuS: round(Math.max(...cpu)),
      pgCpuS: round(pgCpuS),
      pgCpuByStatement,
      cpuPathS: round(Math.max(...cpu, (cpu.reduce((a, b) => a + b, 0) + pgCpuS) / availableParallelism())),
      loadAvg1m: round(load),
      loadAvg1mEnd: round(loadavg()[0]),
      metricsSha1: hash.digest("hex").slice(0, 12),
    };
  } finally {
    await Promise.all(processes.map(stopWorker));
    // The workers' output with the seconds since each started: where a run's time went, job by job.
    if (process.env.STREETFLOW_BENCH_LOG)
      appendFileSync(process.env.STREETFLOW_BENCH_LOG, processes.map((p) => p.out).join(""));
  }
}

const round = (x: number) => Number(x.toFixed(2));

/** A worker process, resolved once its runner is started. */
export async function startWorker(env: {
  url: string;
  prefix: string;
  shardTrips: number;
}): Promise<ChildProcess & { out: string }> {
  if (!UNDER_TSX) await (built ??= buildIfChanged(ROOT, () => startBuild(ROOT)));
  const child = spawn(
    process.execPath,
    [...WORKER_NODE_ARGS, ...CLI, "serve", "--role", "worker", "--job-workers", "1"],
    {
      env: {
        ...process.env,
        STREETFLOW_DATA_DIR: join(tmpdir(), `sf-bench-scale-${process.pid}`),
        STREETFLOW_DATABASE_URL: env.url,
        STREETFLOW_REDIS_URL: REDIS_URL,
        STREETFLOW_REDIS_PREFIX: env.prefix,
        STREETFLOW_SHARD_TRIPS: String(env.shardTrips),
      },
    },
  ) as ChildProcess & { out: string };
  child.out = "";
  const spawned = performance.now();
  return new Promise((resolve, reject) => {
    const read = (d: Buffer) => {
      const at = ((performance.now() - spawned) / 1000).toFixed(1);
      child.out += d.toString().replace(/^(?=.)/gm, `[${child.pid} +${at}s] `);
      if (child.out.includes("Streetflow worker:")) resolve(child);
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.once("exit", (code) => reject(new Error(`worker exited (${code}): ${child.out}`)));
  });
}

export async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

/** User + system CPU seconds of a process and all its threads. */
export function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

async function settled(store: Store, uuid: string, tick: () => Promise<void>) {
  for (;;) {
    const a = (await store.analyses.getByUuid(uuid))!;
    if (a.state !== "queued" && a.state !== "running") return a;
    await tick();
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * CPU seconds of the PostgreSQL server processes serving one database (backends and their parallel
 * workers, as pg_stat_activity lists them), sampled while a run lasts: a backend that exits between two
 * samples loses at most a sample's worth. Backends there at the start count from their CPU then.
 */
class BackendCpu {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  /** Each backend's statement at its last sample, charged with the CPU until the next. */
  private readonly statementOf = new Map<number, string>();
  private readonly byStatement = new Map<string, number>();

  private constructor(
    private readonly client: pg.Client,
    private readonly database: string,
  ) {}

  static async start(url: string): Promise<BackendCpu> {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    const cpu = new BackendCpu(client, new URL(url).pathname.slice(1));
    await cpu.sample(true);
    return cpu;
  }

  async sample(atStart = false): Promise<void> {
    const { rows } = await this.client.query<{ pid: number; query: string }>(
      "SELECT pid, query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [this.database],
    );
    for (const { pid, query } of rows) {
      const seconds = cpuSecondsOrNull(pid);
      if (seconds === null) continue;
      if (!this.first.has(pid)) this.first.set(pid, atStart ? seconds : 0);
      const statement = this.statementOf.get(pid);
      if (statement !== undefined) {
        const spent = seconds - (this.last.get(pid) ?? this.first.get(pid)!);
        this.byStatement.set(statement, (this.byStatement.get(statement) ?? 0) + spent);
      }
      this.statementOf.set(pid, statementKey(query));
      this.last.set(pid, seconds);
    }
  }

  /**
   * The CPU seconds since the start, and the statements that took 0.1 s or more of it, most first
   * (sampled: a statement shorter than the bench's 200 ms poll may be charged to its neighbour); closes
   * the connection.
   */
  async stop(): Promise<{ seconds: number; byStatement: Record<string, number> }> {
    await this.sample();
    await this.client.end();
    let seconds = 0;
    for (const [pid, last] of this.last) seconds += last - this.first.get(pid)!;
    const byStatement = [...this.byStatement]
      .filter(([, s]) => s >= 0.1)
      .sort((a, b) => b[1] - a[1])
      .map(([statement, s]) => [statement, round(s)]);
    return { seconds, byStatement: Object.fromEntries(byStatement) };
  }
}

/** A statement's first words without its literals: one key for every COPY page, every insert. */
const statementKey = (query: string) =>
  query
    .replace(/\s+/g, " ")
    .replace(/'[^']*'|\$\d+|\b\d+\b/g, "?")
    .slice(0, 60);

function cpuSecondsOrNull(pid: number): number | null {
  try {
    return cpuSecondsOf(pid);
  } catch {
    return null; // exited meanwhile
  }
}

/** The bench database with `trips` trips (copied from the bench/analysis SQLite cache when missing). */
async function databaseWithTrips(network: Network, trips: number): Promise<string> {
  const database = `streetflow_bench_scale_${trips}`;
  const url = Object.assign(new URL(PG_URL), { pathname: `/${database}` }).toString();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount === 1) {
      const store = await PostgresStore.open(url);
      const complete = (await store.trips.countTrips(COUNTRY)) === trips;
      await store.close();
      if (complete) return url;
      await admin.query(`DROP DATABASE ${database} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const source = await openTripStore(
    join(tmpdir(), `streetflow-bench-analysis-${trips}.sqlite`),
    network,
    trips,
  );
  const store = await PostgresStore.open(url);
  try {
    const info = { country: COUNTRY, source: EXTRACT, segmentCount: network.size, importedAt: "" };
    await store.network.replaceCountry(info, network.segments);
    let batch: MatchedTrip[] = [];
    for await (const cols of source.trips.scan(COUNTRY)) {
      batch.push(...columnsToTrips(cols));
      if (batch.length >= 20_000) {
        await store.trips.appendTrips(COUNTRY, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await store.trips.appendTrips(COUNTRY, batch);
  } finally {
    await source.close();
    await store.close();
  }
  return url;
}
