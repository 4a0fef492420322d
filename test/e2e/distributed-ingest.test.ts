import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { databaseFile } from "../../src/config/config.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import {
  exitOf,
  stopProcess,
  openDistributedServices,
  startWorkerProcess,
  type DistributedServices,
  type WorkerProcess,
} from "../helpers/distributed.js";
import { runCli } from "../helpers/server.js";
import { storeDigest, type StoreDigest } from "../helpers/store-digest.js";
import { tempDir } from "../helpers/temp-dir.js";

/**
 * Distributed ingest (issue 15): `streetflow ingest` on PostgreSQL + Redis reads and splits the traces,
 * queues chunks of trips, and two `serve --role worker` processes match and store them. The store ends
 * up with what a single SQLite process stores from the same file (compared through the ports), and the
 * report says the same; a worker killed with SIGKILL in the middle of a chunk leaves it to the other,
 * with nothing stored twice.
 */

const MONTH = "2025-03";
/** Short leases, so a killed worker's chunk is back in the queue within seconds. */
const FAST_RECOVERY = { STREETFLOW_JOB_LEASE_MS: "3000", STREETFLOW_REDIS_STALLED_CHECK_MS: "500" };
const SQLITE_ENV = { STREETFLOW_DATABASE_URL: undefined, STREETFLOW_REDIS_URL: undefined };

const plain = await openDistributedServices();
const crash = plain.skip ? plain : await openDistributedServices();

interface Cluster {
  svc: DistributedServices;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  workers: WorkerProcess[];
}

async function cli(dataDir: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  const r = await runCli(dataDir, args, "", env);
  assert.equal(r.code, 0, `streetflow ${args.join(" ")}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

const ingestArgs = (traces: string, ...more: string[]) => [
  ...["ingest", traces, "--country", "mc", "--source", "lbs", "--threads", "1"],
  ...more,
];

async function pgDigest(cluster: Cluster): Promise<StoreDigest> {
  const store = await PostgresStore.open(cluster.env.STREETFLOW_DATABASE_URL!, { pool: { max: 2 } });
  try {
    return await storeDigest(store, "mc");
  } finally {
    await store.close();
  }
}

async function startCluster(svc: DistributedServices): Promise<Cluster> {
  const dataDir = tempDir("streetflow-ingest-cluster-");
  const env = { ...svc.env, ...FAST_RECOVERY };
  await cli(dataDir, env, "import-osm", MONACO_PBF, "--country", "mc");
  const workers = await Promise.all([1, 2].map(() => startWorkerProcess(dataDir, env)));
  return { svc, dataDir, env, workers };
}

async function stopCluster(cluster: Cluster | undefined): Promise<void> {
  if (!cluster) return;
  await Promise.all(cluster.workers.map((w) => stopProcess(w.child)));
  await cluster.svc.dispose();
}

/** The report lines that must agree (the progress lines on stderr differ by design). */
const reportOf = (stdout: string) => stdout.trim().split("\n");

describe(
  "distributed ingest: chunks matched by 2 worker processes on PostgreSQL and Redis",
  { skip: plain.skip },
  () => {
    let traces: string;
    let reference: StoreDigest;
    let referenceReport: string[];
    let first: Cluster | undefined;
    let second: Cluster | undefined;

    before(async () => {
      const singleDir = tempDir("streetflow-ingest-single-");
      await cli(singleDir, SQLITE_ENV, "import-osm", MONACO_PBF, "--country", "mc");
      const simDir = join(singleDir, "sim");
      await cli(
        singleDir,
        SQLITE_ENV,
        ...["simulate", "--country", "mc", "--from", MONTH, "--to", MONTH, "--trips-per-day", "25"],
        ...["--seed", "11", "--source", "lbs", "--out", simDir],
      );
      traces = join(simDir, `traces-${MONTH}.csv`);
      referenceReport = reportOf((await cli(singleDir, SQLITE_ENV, ...ingestArgs(traces))).stdout);
      const store = new SqliteStore(databaseFile(singleDir), { readonly: true });
      try {
        reference = await storeDigest(store, "mc");
      } finally {
        await store.close();
      }
      assert.ok(reference.trips > 300, `enough trips for several chunks (${reference.trips})`);
      [first, second] = await Promise.all([
        startCluster(plain as DistributedServices),
        startCluster(crash as DistributedServices),
      ]);
    });

    after(async () => {
      await Promise.all([stopCluster(first), stopCluster(second)]);
    });

    it("stores the same trips and tallies as one SQLite process, and reports the same counts", async () => {
      const cluster = first!;
      const { stdout, stderr } = await cli(
        cluster.dataDir,
        cluster.env,
        ...ingestArgs(traces, "--chunk-trips", "100"),
      );
      const chunks = Math.ceil(reference.trips / 100);
      assert.match(stderr, new RegExp(`chunks: ${chunks}/${chunks} done`), stderr);
      assert.deepEqual(reportOf(stdout), referenceReport);
      assert.deepEqual(await pgDigest(cluster), reference);
      const taken = cluster.workers.map(
        (w) => (w.output().match(/ingest chunk \d+ \(.*\) done/g) ?? []).length,
      );
      assert.equal(
        taken.reduce((a, b) => a + b, 0),
        chunks,
        cluster.workers.map((w) => w.output()).join("\n"),
      );

      // The same file again: every trip is a duplicate, nothing changes.
      const again = await cli(cluster.dataDir, cluster.env, ...ingestArgs(traces, "--chunk-trips", "100"));
      assert.match(
        again.stdout,
        new RegExp(`stored: +0 \\(${reference.trips.toLocaleString("en-US")} already stored\\)`),
      );
      assert.deepEqual(await pgDigest(cluster), reference);
    });

    it("kill -9 of a worker in the middle of a chunk: the other finishes it, nothing is stored twice", async () => {
      const cluster = second!;
      const ingest = runCli(cluster.dataDir, ingestArgs(traces, "--chunk-trips", "100"), "", cluster.env);
      const { holder, line } = await chunkHolder(cluster.workers);
      const killed = exitOf(holder.child);
      holder.child.kill("SIGKILL");
      await killed;
      const survivor = cluster.workers.find((w) => w !== holder)!;

      const { code, stdout, stderr } = await ingest;
      assert.equal(code, 0, `${stdout}\n${stderr}\n${survivor.output()}`);
      assert.deepEqual(reportOf(stdout), referenceReport);
      assert.deepEqual(await pgDigest(cluster), reference);
      // The chunk the killed worker held was finished by the survivor, as a second attempt, unless the kill
      // came after the chunk was done.
      const chunk = line.replace(/ started, attempt 1$/, "");
      if (!holder.output().includes(`${chunk} done`))
        assert.ok(survivor.output().includes(`${chunk} started, attempt 2`), survivor.output());
      cluster.workers = [survivor];
    });
  },
);

/** The first worker that logs starting a chunk, and that line. */
function chunkHolder(workers: WorkerProcess[]): Promise<{ holder: WorkerProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const look = () => {
      for (const w of workers) {
        const line = /ingest chunk \d+ \([^)]*\) started, attempt 1/.exec(w.output())?.[0];
        if (line) return resolve({ holder: w, line });
      }
      if (workers.every((w) => w.child.exitCode !== null || w.child.signalCode !== null))
        return reject(new Error(`no worker started a chunk:\n${workers.map((w) => w.output()).join("\n")}`));
      setTimeout(look, 5);
    };
    look();
  });
}
