import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { BullJobQueue } from "../../src/queue/bullmq/job-queue.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { ANALYSIS_WORKER } from "../../src/main/runtime.js";
import { cancelAnalysis, createAnalysis } from "../../src/app/analyses/lifecycle.js";
import { computeAnalysis } from "../../src/app/analyses/compute.js";
import type { Store } from "../../src/app/ports/store.js";
import type { AnalysisSpec } from "../../src/domain/analyses/spec.js";
import { shardScenario } from "../helpers/shard-scenario.js";
import { tempDir } from "../helpers/temp-dir.js";
import { servicesSkip, TEST_DATABASE_URL, TEST_REDIS_URL } from "../helpers/distributed.js";

const PG_URL = TEST_DATABASE_URL;
const REDIS_URL = TEST_REDIS_URL;
const SHARD_COMPUTE = new URL("../helpers/shard-compute.ts", import.meta.url).href;

const skip = await servicesSkip("the shard tests");

/**
 * Analyses split into shard jobs (BullMQ flows) on PostgreSQL and Redis, taken by two runners as two
 * worker processes would: the merged CSVs equal, byte for byte, those of the single-process run (the
 * same data on SQLite, computed whole); a shard failing once is retried; cancelling mid-flight leaves a
 * Cancelled analysis without results.
 */
describe("analysis shards on PostgreSQL and Redis", { skip: skip ?? false }, () => {
  const database = `streetflow_shards_${process.pid}_${Date.now().toString(36)}`;
  const url = Object.assign(new URL(PG_URL), { pathname: `/${database}` }).toString();
  const prefix = `sf-shards-${process.pid}-${Date.now().toString(36)}`;
  const dir = tempDir("streetflow-shards-");
  const log: string[] = [];
  let admin: pg.Client;
  let store: PostgresStore;
  let single: SqliteStore;
  const queues: BullJobQueue[] = [];
  const runners: JobRunner[] = [];
  let scenario: Awaited<ReturnType<typeof shardScenario>>;
  let singleScenario: Awaited<ReturnType<typeof shardScenario>>;
  /** The store as the API sees it: PostgreSQL with its jobs on Redis. */
  let api: Store;
  /** Run once, by the next runner that counts the devices of an analysis it plans, before it counts. */
  let holdPlanning: (() => Promise<void>) | null = null;
  const planningHeld = (stats: Store["tripStats"]): Store["tripStats"] =>
    new Proxy(stats, {
      get: (target, key) =>
        key !== "devicesByMonth"
          ? Reflect.get(target, key, target)
          : async (...args: Parameters<Store["tripStats"]["devicesByMonth"]>) => {
              const hold = holdPlanning;
              holdPlanning = null;
              await hold?.();
              return await target.devicesByMonth(...args);
            },
    });

  before(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    store = await PostgresStore.open(url, { pool: { max: 4 } });
    single = new SqliteStore(join(dir, "single.db"));
    scenario = await shardScenario(store);
    singleScenario = await shardScenario(single);
    const queue = () => {
      const q = new BullJobQueue({ url: REDIS_URL, prefix, stalledCheckMs: 200 });
      queues.push(q);
      return q;
    };
    const apiQueue = queue();
    api = new Proxy(store, {
      get: (target, key) => (key === "jobs" ? apiQueue : Reflect.get(target, key, target)),
    });
    process.env.STREETFLOW_TEST_FLAKY_MARKER = join(dir, "flaky");
    // Two runners, each with its own Redis connections: two worker processes.
    const made = [queue(), queue()].map(
      (q) =>
        new JobRunner({
          store: new Proxy(store, {
            get: (target, key) =>
              key === "jobs"
                ? q
                : key === "tripStats"
                  ? planningHeld(target.tripStats)
                  : Reflect.get(target, key, target),
          }),
          queue: q,
          workerStore: { kind: "postgres", url },
          workerModule: ANALYSIS_WORKER,
          computeModule: SHARD_COMPUTE,
          shardTrips: 400,
          pollMs: 50,
          leaseMs: 5000,
          // As worker processes do: threads warmed when the runners start.
          warm: true,
          log: (line) => log.push(line),
        }),
    );
    runners.push(...made);
    for (const r of runners) await r.start();
  });

  after(async () => {
    for (const r of runners) await r.stop();
    await queues[0]?.destroy();
    for (const q of queues.slice(1)) await q.close();
    await store?.close();
    await single?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
  });

  /** The analysis once it leaves Processing. */
  const settled = async (uuid: string) => {
    for (;;) {
      const a = (await store.analyses.getByUuid(uuid))!;
      if (a.state !== "queued" && a.state !== "running") return a;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** The single-process run: the same data and request on SQLite, computed whole. */
  const wholeOnSqlite = async (spec: AnalysisSpec) => {
    const same = await singleScenario.spec(spec.name, {});
    return await computeAnalysis(same, {
      store: single,
      networks: singleScenario.networks,
      onProgress: () => {},
    });
  };

  const assertSameCsvs = async (uuid: string, whole: Record<string, string>) => {
    const done = await settled(uuid);
    assert.equal(done.state, "done", done.failureReason ?? "");
    // Names starting with "_" are stored beside the metrics (the coverage review), not listed.
    const listed = Object.keys(whole).filter((m) => !m.startsWith("_"));
    assert.deepEqual([...done.metrics].sort(), listed.sort());
    for (const metric of Object.keys(whole))
      assert.equal(await store.analyses.result(uuid, metric), whole[metric], `${metric} differs`);
  };

  it("splits an analysis into shards that both runners take, and merges them to the single-process CSVs", async () => {
    const spec = await scenario.spec("Sharded");
    await createAnalysis(api, spec);
    // 900 trips a month in chunks of 200 (the last 100), shards of about 400 trips: 2 a month (400 and 500), 6 in all.
    await assertSameCsvs(spec.uuid, await wholeOnSqlite(spec));
    const mine = log.filter((l) => l.includes(`(${spec.uuid})`));
    const split = mine.findIndex((l) => l.includes(" split into 6 shards"));
    assert.ok(split >= 0, log.join("\n"));
    // Every pass of the parent job says it was claimed before it plans: the first pass splits it.
    assert.match(mine[split - 1] ?? "", / claimed, attempt 1: planning$/, mine.join("\n"));
    const owners = new Set(log.filter((l) => l.includes(spec.uuid) && / shard \d+\/6 done/.test(l)));
    assert.equal(owners.size, 6);
    // Then two merge parts write the od_* rows of half the zone pairs each, and the job lays them together.
    assert.ok(log.some((l) => l.includes(`(${spec.uuid}) merge split into 2 parts`)));
    assert.equal(log.filter((l) => l.includes(spec.uuid) && / merge part \d\/2 done/.test(l)).length, 2);
  });

  it("leaves the split and the merge to the new holder of a job whose lease ran out while it was planned", async () => {
    const spec = await scenario.spec("Planned twice");
    const mine = () => log.filter((l) => l.includes(`(${spec.uuid})`));
    holdPlanning = async () => {
      // The lease runs out mid-plan (a slow plan at load 10+): the other runner takes the job and splits it.
      const jobId = (await store.analyses.getByUuid(spec.uuid))!.jobId!;
      const holder = (await queues[0].get(jobId))!.leaseOwner!;
      await queues[0].expireLeases((owner) => owner === holder);
      while (!mine().some((l) => l.includes(" split into "))) await new Promise((r) => setTimeout(r, 50));
    };
    await createAnalysis(api, spec);
    await assertSameCsvs(spec.uuid, await wholeOnSqlite(spec));
    assert.equal(holdPlanning, null, "a runner was held while planning");
    // Before, the first runner went on: it added the merge parts while the shards ran, and its merge
    // found "the result of shard (piece 0) 0 is missing"; the holder's merge pass then said "split into 8".
    assert.ok(!log.some((l) => l.includes("is missing")), log.join("\n"));
    assert.deepEqual(
      mine()
        .filter((l) => / split into /.test(l))
        .map((l) => l.slice(l.indexOf(") ") + 2)),
      ["split into 6 shards", "merge split into 2 parts"],
    );
    assert.ok(
      mine().some((l) => l.endsWith("lost its job while planning; left to its holder")),
      mine().join("\n"),
    );
  });

  it("retries a shard that failed once; the result is still the single-process one", async () => {
    const spec = await scenario.spec("flaky shards");
    await createAnalysis(api, spec);
    await assertSameCsvs(spec.uuid, await wholeOnSqlite(spec));
    const marker = `${process.env.STREETFLOW_TEST_FLAKY_MARKER}-${spec.uuid}`;
    assert.ok(existsSync(marker), "a shard failed once");
    assert.ok(
      log.some(
        (l) => l.includes(spec.uuid) && l.includes("failed (the database went away (injected)); retrying"),
      ),
      readFileSync(marker, "utf8"),
    );
  });

  it("cancels mid-flight: Cancelled, no results, and no shard left running", async () => {
    const spec = await scenario.spec("hang shards");
    const created = await createAnalysis(api, spec);
    for (;;) {
      const a = (await store.analyses.getByUuid(spec.uuid))!;
      if (a.state === "running" && log.some((l) => l.includes(`(${spec.uuid}) split into`))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300)); // both runners are in a hanging shard now
    await cancelAnalysis(api, spec.orgId, spec.uuid);
    const ended = await settled(spec.uuid);
    assert.equal(ended.state, "cancelled");
    assert.deepEqual(ended.metrics, []);
    assert.equal((await queues[0].get(created.jobId!))?.state, "cancelled");
    // The runners stop their shards at the next heartbeat and take the next job: one that finishes.
    const next = await scenario.spec("After the cancel");
    await createAnalysis(api, next);
    assert.equal((await settled(next.uuid)).state, "done");
    assert.ok(
      !log.some((l) => l.includes(spec.uuid) && l.includes("merging")),
      "the cancelled analysis never merged",
    );
  });
});
