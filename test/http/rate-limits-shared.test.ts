import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.js";
import { storeNetworks } from "../../src/app/networks.js";
import { sharedRateCountersFromEnv, type RedisRateCounters } from "../../src/queue/shared-rate-counters.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeOrg, type TestOrg } from "../helpers/app.js";
import { reachRedis, TEST_REDIS_URL } from "../helpers/distributed.js";
import { tempDir } from "../helpers/temp-dir.js";

/**
 * Two API processes behind one load balancer (here: two servers on one store file, over real HTTP) count
 * against the same per-minute limits when their counters live in Redis (STREETFLOW_REDIS_URL): a key over
 * its limit on one is over it on the other.
 */
const reached = await reachRedis("the shared rate-limit counters");
const PER_KEY = 3;

describe("rate limits shared by several API processes through Redis", { skip: reached.skip }, () => {
  const prefix = `sf-test-rate-${process.pid}-${Date.now()}`;
  const env = { STREETFLOW_REDIS_URL: TEST_REDIS_URL, STREETFLOW_REDIS_PREFIX: prefix };
  let counters: RedisRateCounters[];
  let store: SqliteStore;
  let servers: { app: FastifyInstance; base: string }[];
  let org: TestOrg;

  before(async () => {
    counters = [(await sharedRateCountersFromEnv(env))!, (await sharedRateCountersFromEnv(env))!];
    store = new SqliteStore(join(tempDir("sf-rate-shared-"), "streetflow.db"));
    org = await makeOrg(store, "Shared limits");
    servers = await Promise.all(
      counters.map(async (shared) => {
        const app = await buildApp({
          store,
          networks: storeNetworks(store.network),
          security: { rateLimits: { perKey: PER_KEY, perSession: PER_KEY, perAddress: 100, shared } },
        });
        await app.listen({ port: 0, host: "127.0.0.1" });
        const address = app.server.address();
        return { app, base: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}` };
      }),
    );
  });
  after(async () => {
    for (const { app } of servers) await app.close();
    const redis = reached.client!;
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    for (const c of counters) await c.close();
    await store.close();
  });

  const zoneSets = async (base: string) =>
    (await fetch(`${base}/api/v2/zone_sets`, { headers: { "x-stl-key": org.key } })).status;

  it("answers 429 on the second server once the key used its minute on both together", async () => {
    const [a, b] = servers;
    const statuses = [await zoneSets(a.base), await zoneSets(b.base), await zoneSets(a.base)];
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.equal(await zoneSets(b.base), 429, "the second server did not see the first one's requests");
    assert.equal(await zoneSets(a.base), 429);
    assert.ok((await reached.client!.keys(`${prefix}:rate:*`)).length > 0, "the counters are in Redis");
  });
});
