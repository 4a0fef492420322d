import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { demoKey, startServer, type RunningServer } from "../helpers/server.js";

describe("streetflow serve (real process, real HTTP)", () => {
  let server: RunningServer;
  let key: string;
  before(async () => {
    server = await startServer();
    key = demoKey(server.dataDir);
  });
  after(() => server?.stop());

  it("creates the demo organization and prints its key on first start", () => {
    assert.match(key, /^sf_[A-Za-z0-9_-]{43}$/);
    assert.ok(server.output().includes(key), "the key is printed");
  });

  it("answers echo with the demo key, in the query or in x-stl-key", async () => {
    const viaQuery = await fetch(`${server.baseUrl}/api/v2/debug/echo?key=${key}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ message: "ping" }),
    });
    assert.equal(viaQuery.status, 200);
    assert.deepEqual(await viaQuery.json(), { message: "ping", status: "success" });
    const viaHeader = await fetch(`${server.baseUrl}/api/v2/debug/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-stl-key": key },
      body: JSON.stringify({ message: "pong" }),
    });
    assert.equal(viaHeader.status, 200);
  });

  it("rejects a request without a key with 401 and the error body", async () => {
    const res = await fetch(`${server.baseUrl}/api/v2/debug/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "ping" }),
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { status: string }).status, "error");
  });

  it("has the demo network imported: Monaco is a known country", async () => {
    const res = await fetch(`${server.baseUrl}/api/v2/date_ranges/mc/All_Vehicles?key=${key}`);
    assert.equal(res.status, 200);
  });

  it("serves the OpenAPI document and its UI", async () => {
    const doc = (await (await fetch(`${server.baseUrl}/docs/openapi.json`)).json()) as { openapi: string };
    assert.equal(doc.openapi, "3.0.3");
    assert.equal((await fetch(`${server.baseUrl}/docs`, { redirect: "manual" })).status < 400, true);
  });
});
