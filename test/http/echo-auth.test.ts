import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeTestApp, type TestContext } from "../helpers/app.js";

describe("POST /api/v2/debug/echo and key handling", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
  });
  after(() => ctx.app.close());

  const echo = (url: string, headers: Record<string, string> = {}, payload: unknown = { message: "hi" }) =>
    ctx.app.inject({ method: "POST", url, headers, payload: payload as object });

  it("echoes the message with the key as query parameter", async () => {
    const res = await echo(`/api/v2/debug/echo?key=${ctx.orgA.key}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { message: "hi", status: "success" });
  });

  it("accepts the key in header x-stl-key", async () => {
    const res = await echo("/api/v2/debug/echo", { "x-stl-key": ctx.orgB.key });
    assert.equal(res.statusCode, 200);
  });

  it("answers 401 with the error body for a missing or unknown key", async () => {
    for (const url of ["/api/v2/debug/echo", "/api/v2/debug/echo?key=sf_nope"]) {
      const res = await echo(url);
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().status, "error");
      assert.equal(res.json().error.code, "unauthorized");
    }
  });

  it("rejects a revoked key", async () => {
    const { issueApiKey } = await import("../../src/app/accounts.js");
    const issued = await issueApiKey(ctx.store, ctx.orgA.orgId);
    assert.equal((await echo(`/api/v2/debug/echo?key=${issued.key}`)).statusCode, 200);
    await ctx.store.accounts.revokeKey(issued.record.id);
    assert.equal((await echo(`/api/v2/debug/echo?key=${issued.key}`)).statusCode, 401);
  });

  it("answers 400 naming the field when the body is wrong", async () => {
    const res = await echo(`/api/v2/debug/echo?key=${ctx.orgA.key}`, {}, { message: 42 });
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.status, "error");
    assert.equal(body.error.field, "message");
    assert.doesNotMatch(res.body, /at .*\.ts:\d+/);
  });

  it("answers 404 with the error body for unknown routes", async () => {
    const res = await ctx.app.inject({ method: "GET", url: "/api/v2/nothing-here" });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().status, "error");
  });

  it("serves the OpenAPI document", async () => {
    const res = await ctx.app.inject({ method: "GET", url: "/docs/openapi.json" });
    assert.equal(res.statusCode, 200);
    assert.ok(res.json().paths["/api/v2/debug/echo"]);
  });
});
