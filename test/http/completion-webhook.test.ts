import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { JobRunner } from "../../src/jobs/runner.js";
import { completionNotifier } from "../../src/app/analyses/completion-webhook.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { odRequest, seedAnalysisData, startQuickRunner, TEST_COMPUTE } from "../helpers/analyses.js";

describe("completion webhook (enable_completion_email)", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-webhook-"));
  let ctx: TestContext;
  let runner: JobRunner;
  let receiver: Server;
  let receiverUrl = "";
  const received: Record<string, unknown>[] = [];
  let notify: (() => void) | null = null;

  before(async () => {
    const store = new SqliteStore(join(dir, "streetflow.db"));
    ctx = await makeTestApp(store);
    await seedAnalysisData(store, ctx.orgA.orgId);
    receiver = createServer((req, res) => {
      let text = "";
      req.on("data", (c) => (text += c));
      req.on("end", () => {
        received.push(JSON.parse(text));
        res.end("ok");
        notify?.();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`;
    runner = await startQuickRunner(store, TEST_COMPUTE, { onFinished: completionNotifier(store, () => {}) });
  });
  after(async () => {
    await runner.stop();
    await ctx.app.close();
    await ctx.store.close();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const webhook = (method: "GET" | "PUT" | "DELETE", payload?: object, key = ctx.orgA.key) =>
    ctx.app.inject({ method, url: `/api/v2/account/completion_webhook?key=${key}`, payload });
  const nextCall = () => new Promise<void>((r) => (notify = r));

  it("is set, read and removed per organization; a bad URL or a stranger is refused", async () => {
    assert.deepEqual((await webhook("GET")).json(), { status: "success", url: null });
    const bad = await webhook("PUT", { insight_login_email: ctx.orgA.email, url: "ftp://example.com/x" });
    assert.equal(bad.statusCode, 400);
    const stranger = await webhook("PUT", { insight_login_email: ctx.orgB.email, url: receiverUrl });
    assert.equal(stranger.statusCode, 403);
    const set = await webhook("PUT", { insight_login_email: ctx.orgA.email, url: receiverUrl });
    assert.deepEqual(set.json(), { status: "success", url: receiverUrl });
    assert.deepEqual((await webhook("GET", undefined, ctx.orgB.key)).json(), {
      status: "success",
      url: null,
    });
  });

  it("is called when an analysis asking for it finishes, and only then", async () => {
    const create = (extra: Record<string, unknown>) =>
      ctx.app.inject({
        method: "POST",
        url: `/api/v2/analyses?key=${ctx.orgA.key}`,
        payload: odRequest(ctx.orgA.email, extra),
      });
    // Created first and run first (same priority, older): finishing it must not call the webhook.
    await create({ analysis_name: "Quiet", enable_completion_email: false });
    const called = nextCall();
    const { uuid } = (await create({ analysis_name: "Announced", enable_completion_email: true })).json();
    await called;
    assert.equal(received.length, 1);
    assert.deepEqual(received[0], {
      event: "analysis_finished",
      name: "Announced",
      uuid,
      status: "Data Available",
      metrics: ["od_comm", "zone_od_comm", "sample_size"],
      shapefiles: ["origin_zones", "destination_zones"],
      insight_login_email: ctx.orgA.email,
    });
  });

  it("is removed with DELETE", async () => {
    const removed = await webhook("DELETE", { insight_login_email: ctx.orgA.email });
    assert.deepEqual(removed.json(), { status: "success", url: null });
    assert.deepEqual((await webhook("GET")).json(), { status: "success", url: null });
  });
});
