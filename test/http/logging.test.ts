import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { buildApp } from "../../src/api/app.js";
import { storeNetworks } from "../../src/app/networks.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { FastifyInstance } from "fastify";
import { makeOrg, type TestOrg } from "../helpers/app.js";

describe("request log", () => {
  const lines: string[] = [];
  let app: FastifyInstance;
  let org: TestOrg;
  before(async () => {
    const store = new SqliteStore(":memory:");
    app = await buildApp({
      store,
      networks: storeNetworks(store.network),
      logSink: { write: (line) => void lines.push(line) },
    });
    org = await makeOrg(store, "Logged");
  });
  after(() => app.close());

  const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

  it("never contains an API key, whether it came in the query or a header", async () => {
    const wrongKey = "sf_" + "w".repeat(43);
    const requests = [
      { method: "POST" as const, url: `/api/v2/debug/echo?key=${org.key}`, payload: { message: "hi" } },
      { method: "GET" as const, url: `/api/v2/account?pad=1&key=${org.key}&x=2` },
      { method: "GET" as const, url: `/api/v2/account?key=${wrongKey}` },
      { method: "GET" as const, url: `/api/v2/zone_sets/%zz?key=${org.key}` },
      { method: "GET" as const, url: `/api/v2/nothing?key=${org.key}` },
      { method: "GET" as const, url: "/api/v2/account", headers: { "x-stl-key": org.key } },
      {
        method: "GET" as const,
        url: "/counts/v1/date_ranges/mc/vehicle",
        headers: { "x-service-key": org.key },
      },
      {
        method: "GET" as const,
        url: "/counts/v1/date_ranges/mc/vehicle",
        headers: { "x-service-key": wrongKey },
      },
    ];
    for (const r of requests) await app.inject(r);
    const text = lines.join("");
    assert.ok(lines.length >= requests.length, "the requests were logged");
    assert.ok(!text.includes(org.key), "the valid key is not in the log");
    assert.ok(!text.includes(wrongKey), "a wrong key is not in the log either");
    assert.ok(!text.includes(org.key.slice(3, 20)), "no part of the key is in the log");
  });

  it("writes one line per request with method, route, status, time and request id", async () => {
    lines.length = 0;
    await app.inject({ method: "GET", url: `/api/v2/zone_sets?key=${org.key}` });
    const entries = logged();
    assert.equal(entries.length, 1, lines.join(""));
    const [entry] = entries;
    assert.equal(entry.method, "GET");
    assert.equal(entry.route, "/api/v2/zone_sets");
    assert.equal(entry.status, 200);
    assert.equal(typeof entry.ms, "number");
    assert.equal(typeof entry.reqId, "string");
  });
});
