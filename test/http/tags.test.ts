import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { odRequest, seedAnalysisData } from "../helpers/analyses.js";

describe("tags and the vendor's analysis options", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
    await seedAnalysisData(ctx.store, ctx.orgA.orgId);
  });
  after(async () => {
    await ctx.app.close();
    await ctx.store.close();
  });

  const call = (method: "GET" | "POST", url: string, payload?: object, key = ctx.orgA.key) =>
    ctx.app.inject({ method, url: `/api/v2/${url}${url.includes("?") ? "&" : "?"}key=${key}`, payload });
  const create = async (extra: Record<string, unknown>) => {
    const res = await call("POST", "analyses", odRequest(ctx.orgA.email, extra));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().uuid as string;
  };
  const detail = async (uuid: string) => (await call("GET", `analyses/${uuid}`)).json().analysis;
  const listNames = async (tag: string) =>
    (await call("GET", `analyses?tag=${encodeURIComponent(tag)}`))
      .json()
      .analyses.map((a: { name: string }) => a.name);

  it("creates tags (201), lists them with their analyses, refuses a duplicate and a stranger", async () => {
    const created = await call("POST", "analyses/tags", {
      insight_login_email: ctx.orgA.email,
      tag_name: " Corridor ",
    });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.json(), { status: "success", tag_name: "Corridor" });
    const again = await call("POST", "analyses/tags", {
      insight_login_email: ctx.orgA.email,
      tag_name: "corridor",
    });
    assert.equal(again.statusCode, 409);
    const stranger = await call("POST", "analyses/tags", {
      insight_login_email: ctx.orgB.email,
      tag_name: "x",
    });
    assert.equal(stranger.statusCode, 403);
    const blank = await call("POST", "analyses/tags", {
      insight_login_email: ctx.orgA.email,
      tag_name: "  ",
    });
    assert.equal(blank.statusCode, 400);

    const listed = (await call("GET", "tags")).json();
    assert.equal(listed.status, "success");
    assert.deepEqual(
      listed.tags.map((t: Record<string, unknown>) => [t.tag_name, t.created_by, t.analysis_num]),
      [["Corridor", ctx.orgA.email, 0]],
    );
    assert.deepEqual((await call("GET", "tags", undefined, ctx.orgB.key)).json(), {
      tags: [],
      status: "success",
    });
  });

  it("tags analyses at creation and by name or uuid; filters the list and shows them in the detail", async () => {
    const first = await create({ analysis_name: "Tagged at creation", tags: "streetlightR" });
    const second = await create({ analysis_name: "Tagged later" });
    assert.deepEqual((await detail(first)).tags, ["streetlightR"]);

    const tag = await call("POST", "tags/tag_analyses", {
      insight_login_email: ctx.orgA.email,
      tags: ["Corridor", "Spring"],
      analyses: [{ name: "Tagged later" }, { uuid: first }],
    });
    assert.equal(tag.statusCode, 200);
    assert.deepEqual(tag.json(), { status: "success" });
    assert.deepEqual((await detail(second)).tags, ["Corridor", "Spring"]);
    assert.deepEqual((await detail(first)).tags, ["Corridor", "Spring", "streetlightR"]);
    assert.deepEqual((await listNames("corridor")).sort(), ["Tagged at creation", "Tagged later"]);
    assert.deepEqual(await listNames("streetlightR"), ["Tagged at creation"]);

    const remove = await call("POST", "tags/remove_analyses_tag", {
      insight_login_email: ctx.orgA.email,
      tags: ["Corridor"],
      analyses: [{ name: "Tagged at creation" }],
    });
    assert.equal(remove.statusCode, 200);
    assert.deepEqual(await listNames("Corridor"), ["Tagged later"]);
    const counts = (await call("GET", "tags"))
      .json()
      .tags.map((t: Record<string, unknown>) => [t.tag_name, t.analysis_num]);
    assert.deepEqual(counts, [
      ["Corridor", 1],
      ["Spring", 2],
      ["streetlightR", 1],
    ]);

    const unknown = await call("POST", "tags/tag_analyses", {
      insight_login_email: ctx.orgA.email,
      tags: ["Corridor"],
      analyses: [{ name: "No such analysis" }],
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.field, "analyses[0]");
    // Organization B cannot tag A's analyses: they do not exist for it.
    const foreign = await call(
      "POST",
      "tags/tag_analyses",
      { insight_login_email: ctx.orgB.email, tags: ["x"], analyses: [{ uuid: first }] },
      ctx.orgB.key,
    );
    assert.equal(foreign.statusCode, 404);
  });

  it("stores and echoes the vendor options; is_massive_queue queues the job behind ordinary ones", async () => {
    const uuid = await create({
      analysis_name: "Vendor options",
      enable_home_work_locations: true,
      hwl_enable_resident: true,
      aadt_calibration_year: "2025",
      segment_types: ["primary", "Motorway"],
      enable_15min: true,
      is_massive_queue: true,
      zone_intersection_type: "all_trips_for_zone",
      enable_visualization: true,
      enable_completion_email: false,
    });
    const a = await detail(uuid);
    assert.deepEqual(
      {
        hwl: [a.enable_home_work_locations, a.hwl_enable_visitor, a.hwl_enable_resident, a.hwl_enable_worker],
        year: a.aadt_calibration_year,
        segments: a.segment_types,
        min15: a.enable_15min,
        massive: a.is_massive_queue,
        intersection: a.zone_intersection_type,
        visualization: a.enable_visualization,
        email: a.enable_completion_email,
      },
      {
        hwl: [true, false, true, false],
        year: 2025,
        segments: ["Motorway", "Primary"],
        min15: true,
        massive: true,
        intersection: "all_trips_for_zone",
        visualization: true,
        email: false,
      },
    );
    const massiveJob = (await ctx.store.jobs.get((await ctx.store.analyses.getByUuid(uuid))!.jobId!))!;
    const ordinary = await create({ analysis_name: "Ordinary" });
    assert.equal(massiveJob.priority, -1);
    assert.equal(
      (await ctx.store.jobs.get((await ctx.store.analyses.getByUuid(ordinary))!.jobId!))!.priority,
      0,
    );
  });
});
