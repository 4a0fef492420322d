import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { MONACO_PBF } from "../helpers/bundled-data.js";
import { runCli, startServer, type RunningServer } from "../helpers/server.js";
import { waitFor } from "../helpers/stop-process.js";
import { tempDir } from "../helpers/temp-dir.js";
import { monacoDistricts } from "../helpers/zones.js";
import {
  exitOf,
  stopProcess,
  openDistributedServices,
  startWorkerProcess,
  type DistributedServices,
  type WorkerProcess,
} from "../helpers/distributed.js";

/**
 * The distributed deployment end to end (issue 15): two `serve --role api` and two `serve --role worker`
 * processes on one PostgreSQL database and one Redis queue, fed by the CLI on PostgreSQL. Every answer is
 * compared with a single `serve` process on SQLite that got the same inputs. Then a worker is killed with
 * SIGKILL while it holds an analysis (another one finishes it after the lease ran out), and one is stopped
 * with SIGTERM (it hands the job back: the next one runs it as the same attempt).
 */

const EMAIL = "planner@example.org";
const MONTH = "2025-03";
const DATE_RANGE = { start_date: "03/01/2025", end_date: "03/31/2025" };

/** Short leases, so a killed worker's job is back in the queue within seconds (docs/deployment.md). */
const FAST_RECOVERY = { STREETFLOW_JOB_LEASE_MS: "3000", STREETFLOW_REDIS_STALLED_CHECK_MS: "500" };

const services = await openDistributedServices();

/** A backend as the test sees it: its data directory, environment and the key the CLI issued there. */
interface Deployment {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  key: string;
}

async function cli(d: Pick<Deployment, "dataDir" | "env">, ...args: string[]): Promise<string> {
  const { code, stdout, stderr } = await runCli(d.dataDir, args, "", d.env);
  assert.equal(code, 0, `streetflow ${args.join(" ")}:\n${stdout}\n${stderr}`);
  return stdout;
}

/** Network, trips and an organization with a user and a key, all through the CLI. */
async function provision(d: Pick<Deployment, "dataDir" | "env">, traces: string): Promise<string> {
  await cli(d, "import-osm", MONACO_PBF, "--country", "mc");
  // Ingested here, not in chunks: no worker runs yet (test/e2e/distributed-ingest.test.ts has chunks).
  await cli(
    d,
    "ingest",
    traces,
    "--country",
    "mc",
    "--source",
    "lbs",
    "--threads",
    "1",
    "--chunk-trips",
    "0",
  );
  await cli(d, "org", "create", "Agency");
  await cli(d, "user", "add", EMAIL, "--org", "Agency");
  return (await cli(d, "key", "create", "--org", "Agency")).trim();
}

async function startWorker(d: Deployment): Promise<WorkerProcess> {
  return await startWorkerProcess(d.dataDir, d.env);
}

function request(server: RunningServer, key: string, path: string, body?: unknown) {
  const sep = path.includes("?") ? "&" : "?";
  return fetch(`${server.baseUrl}${path}${sep}key=${key}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", accept: "application/json", "x-service-key": key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function ok<T>(res: Promise<Response>, status = 200): Promise<T> {
  const answer = await res;
  const text = await answer.text();
  assert.equal(answer.status, status, text);
  return JSON.parse(text) as T;
}

const odAnalysis = (name: string) => ({
  insight_login_email: EMAIL,
  analysis_name: name,
  analysis_type: "OD_Analysis",
  travel_mode_type: "All_Vehicles",
  output_type: "index",
  oz_sets: [{ name: "Districts" }],
  dz_sets: [{ name: "Districts" }],
  date_ranges: [DATE_RANGE],
});

interface Status {
  status: string;
  metrics: string[];
  failure_reason?: string;
}

async function statusOf(server: RunningServer, key: string, uuid: string): Promise<Status> {
  const body = await ok<{ analyses: Status[] }>(
    request(server, key, "/api/v2/analyses/status", { analyses: [{ uuid }] }),
  );
  return body.analyses[0];
}

async function finished(server: RunningServer, key: string, uuid: string): Promise<Status> {
  let last: Status | undefined;
  return await waitFor(
    async () => {
      last = await statusOf(server, key, uuid);
      return last.status === "Processing" ? undefined : last;
    },
    () => `analysis ${uuid} is still ${JSON.stringify(last)}`,
    { everyMs: 200 },
  );
}

/** Every metric CSV of a Data Available analysis, by metric. */
async function csvsOf(server: RunningServer, key: string, name: string, metrics: string[]) {
  const csvs: Record<string, string> = {};
  for (const metric of metrics) {
    const res = await request(
      server,
      key,
      `/api/v2/analyses/download/name/${encodeURIComponent(name)}/${metric}`,
    );
    csvs[metric] = await res.text();
    assert.equal(res.status, 200, csvs[metric]);
  }
  return csvs;
}

async function createAnalysis(server: RunningServer, key: string, name: string): Promise<string> {
  return (await ok<{ uuid: string }>(request(server, key, "/api/v2/analyses", odAnalysis(name)), 201)).uuid;
}

/** Resolves with the worker whose runner logs that it started the analysis `uuid` (attempt `attempt`). */
async function holderOf(candidates: WorkerProcess[], uuid: string, attempt: number): Promise<WorkerProcess> {
  const line = `(${uuid}) started, attempt ${attempt}`;
  const outputs = () => candidates.map((w) => w.output()).join("\n");
  return await waitFor(
    () => {
      const holder = candidates.find((w) => w.output().includes(line));
      if (holder) return holder;
      if (candidates.every((w) => w.child.exitCode !== null || w.child.signalCode !== null))
        throw new Error(`no worker left to start ${uuid}:\n${outputs()}`);
    },
    () => `no worker logged "${line}":\n${outputs()}`,
  );
}

/** Counts metrics over every Monaco segment with data in the month: more rows than one page. */
const COUNTS_METRICS = {
  geometry: {
    radius: {
      point: { type: "point", coordinates: [7.4246, 43.7384] },
      geom_mode: "within",
      buffer: 3,
      unit: "km",
    },
  },
  fields: ["segment_id", "year_month", "trips_volume", "avg_speed"],
  country: "mc",
  mode: "vehicle",
  day_part: "all",
  day_type: "all",
  direction: "bidirectional",
  date: { year: 2025 },
  data_version: 1,
};

interface MetricsPage {
  columns: string[];
  data: unknown[][];
  paging: { next_url: string; total_rows: number; total_pages: number } | null;
}

/** What two answers of the same metrics call share (the request id differs). */
const comparable = (p: MetricsPage) => ({
  columns: p.columns,
  data: p.data,
  paging: p.paging && { total_rows: p.paging.total_rows, total_pages: p.paging.total_pages },
});

describe(
  "distributed deployment: 2 API and 2 worker processes on PostgreSQL and Redis",
  { skip: services.skip },
  () => {
    const sqliteEnv = {
      STREETFLOW_DATABASE_URL: undefined,
      STREETFLOW_REDIS_URL: undefined,
    } satisfies NodeJS.ProcessEnv;
    let svc: DistributedServices;
    let single: Deployment;
    let cluster: Deployment;
    let reference: RunningServer;
    let apis: RunningServer[] = [];
    let workers: WorkerProcess[] = [];
    let referenceCsvs: Record<string, string>;

    before(async () => {
      svc = services as DistributedServices;
      const singleDir = tempDir("streetflow-single-");
      const traces = join(singleDir, "traces");
      const singleDep = { dataDir: singleDir, env: sqliteEnv };
      const clusterDep = {
        dataDir: tempDir("streetflow-cluster-"),
        env: { ...svc.env, ...FAST_RECOVERY },
      };
      // The traces are simulated once, on the SQLite side, and ingested into both stores.
      await cli(singleDep, "import-osm", MONACO_PBF, "--country", "mc");
      await cli(
        singleDep,
        ...["simulate", "--country", "mc", "--from", MONTH, "--to", MONTH],
        "--trips-per-day",
        "20",
        "--seed",
        "7",
        "--source",
        "lbs",
        "--out",
        traces,
      );
      const traceFile = join(traces, `traces-${MONTH}.csv`);
      const [singleKey, clusterKey] = await Promise.all([
        provision(singleDep, traceFile),
        provision(clusterDep, traceFile),
      ]);
      single = { ...singleDep, key: singleKey };
      cluster = { ...clusterDep, key: clusterKey };
      reference = await startServer(["--no-demo", "--job-workers", "1"], single.dataDir, single.env);
      apis = await Promise.all(
        [1, 2].map(() => startServer(["--no-demo", "--role", "api"], cluster.dataDir, cluster.env)),
      );
      workers = await Promise.all([1, 2].map(() => startWorker(cluster)));
    });

    after(async () => {
      await Promise.all([reference, ...apis].filter(Boolean).map((s) => s.stop()));
      await Promise.all(workers.map((w) => stopProcess(w.child)));
      await svc?.dispose();
    });

    it("the CLI wrote the network, trips and accounts to PostgreSQL, not to a SQLite file", async () => {
      const out = await cli(cluster, "networks");
      assert.match(out, /^mc {2}\d+ segments/);
      assert.ok(await svc.hasTable("trip_chunks"), "trip chunks in PostgreSQL");
      assert.equal(existsSync(join(cluster.dataDir, "streetflow.db")), false);
    });

    it("an analysis made on API #1 and polled on API #2 gives the single process's CSVs byte for byte", async () => {
      const zones = {
        insight_login_email: EMAIL,
        zone_set_name: "Districts",
        zones: { type: "FeatureCollection", features: monacoDistricts() },
      };
      await ok(request(reference, single.key, "/api/v2/zone_sets", zones), 201);
      await ok(request(apis[0], cluster.key, "/api/v2/zone_sets", zones), 201);

      const referenceUuid = await createAnalysis(reference, single.key, "OD");
      const done = await finished(reference, single.key, referenceUuid);
      assert.equal(done.status, "Data Available", done.failure_reason);
      referenceCsvs = await csvsOf(reference, single.key, "OD", done.metrics);
      assert.match(referenceCsvs.od_all, /\n.+/, "the reference has flows");

      const uuid = await createAnalysis(apis[0], cluster.key, "OD");
      const status = await finished(apis[1], cluster.key, uuid);
      assert.equal(status.status, "Data Available", status.failure_reason);
      assert.deepEqual(status.metrics, done.metrics);
      assert.deepEqual(await csvsOf(apis[1], cluster.key, "OD", status.metrics), referenceCsvs);
    });

    it("counts metrics answer as the single process does, page 2 fetched from the other API process", async () => {
      const first = await ok<MetricsPage>(
        request(reference, single.key, "/counts/v1/metrics", COUNTS_METRICS),
      );
      assert.ok(first.paging, `more than one page (${first.data.length} rows)`);
      const clusterFirst = await ok<MetricsPage>(
        request(apis[0], cluster.key, "/counts/v1/metrics", COUNTS_METRICS),
      );
      assert.deepEqual(comparable(clusterFirst), comparable(first));

      const second = await ok<MetricsPage>(request(reference, single.key, first.paging.next_url));
      const clusterSecond = await ok<MetricsPage>(
        request(apis[1], cluster.key, clusterFirst.paging!.next_url),
      );
      assert.ok(second.data.length > 0);
      assert.deepEqual(comparable(clusterSecond), comparable(second));
    });

    it("kill -9 of the worker holding an analysis: another worker finishes it with the same CSVs", async () => {
      const uuid = await createAnalysis(apis[0], cluster.key, "OD after a crash");
      const holder = await holderOf(workers, uuid, 1);
      const killed = exitOf(holder.child);
      holder.child.kill("SIGKILL");
      await killed;
      const survivor = workers.find((w) => w !== holder)!;

      const status = await finished(apis[1], cluster.key, uuid);
      assert.equal(status.status, "Data Available", `${status.failure_reason}\n${survivor.output()}`);
      // Taken again once the dead worker's lease ran out: a second attempt, by the other worker.
      assert.ok(survivor.output().includes(`(${uuid}) started, attempt 2`), survivor.output());
      assert.deepEqual(await csvsOf(apis[0], cluster.key, "OD after a crash", status.metrics), referenceCsvs);
      workers = [survivor, await startWorker(cluster)];
    });

    it("SIGTERM to the worker holding an analysis hands it back: the other one runs it as the same attempt", async () => {
      const uuid = await createAnalysis(apis[1], cluster.key, "OD after a stop");
      const holder = await holderOf(workers, uuid, 1);
      const exited = exitOf(holder.child);
      holder.child.kill("SIGTERM");
      assert.equal(await exited, 0, holder.output());
      assert.match(holder.output(), new RegExp(`\\(${uuid}\\) handed back to the queue`));
      const survivor = workers.find((w) => w !== holder)!;
      workers = [survivor];

      const status = await finished(apis[0], cluster.key, uuid);
      assert.equal(status.status, "Data Available", status.failure_reason);
      // A released job is not an interrupted attempt: the next runner starts it as attempt 1 again.
      assert.ok(
        survivor.output().includes(`(${uuid}) started, attempt 1`),
        `${survivor.output()}\nthe stopped worker:\n${holder.output()}`,
      );
      assert.deepEqual(await csvsOf(apis[1], cluster.key, "OD after a stop", status.metrics), referenceCsvs);
    });
  },
);
