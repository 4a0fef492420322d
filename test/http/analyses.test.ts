import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JobRunner } from "../../src/jobs/runner.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { odRequest, seedAnalysisData, startQuickRunner, TEST_COMPUTE } from "../helpers/analyses.js";

/** Polls `probe` until it returns a value, failing after `deadlineMs`. */
async function until<T>(probe: () => Promise<T | undefined>, deadlineMs = 15_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("condition not met before the deadline");
}

describe("analyses endpoints", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-analyses-"));
  let ctx: TestContext;
  let runner: JobRunner;

  before(async () => {
    const store = new SqliteStore(join(dir, "streetflow.db"));
    ctx = await makeTestApp(store);
    await seedAnalysisData(store, ctx.orgA.orgId);
    runner = await startQuickRunner(store, TEST_COMPUTE);
  });
  after(async () => {
    await runner.stop();
    await ctx.app.close();
    await ctx.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = (body: Record<string, unknown>, key = ctx.orgA.key) =>
    ctx.app.inject({ method: "POST", url: `/api/v2/analyses?key=${key}`, payload: body });
  const status = (analyses: unknown[], key = ctx.orgA.key) =>
    ctx.app.inject({ method: "POST", url: `/api/v2/analyses/status?key=${key}`, payload: { analyses } });
  const statusOf = async (uuid: string) => (await status([{ uuid }])).json().analyses[0];
  const waitFor = (uuid: string, wanted: string) =>
    until(async () => {
      const entry = await statusOf(uuid);
      return entry.status === wanted ? entry : undefined;
    });
  const lifecycle = (method: "POST" | "DELETE", path: string, key = ctx.orgA.key, email = ctx.orgA.email) =>
    ctx.app.inject({
      method,
      url: `/api/v2/analyses/${path}?key=${key}`,
      payload: { insight_login_email: email },
    });
  const download = (path: string, key = ctx.orgA.key) =>
    ctx.app.inject({ method: "GET", url: `/api/v2/analyses/download/${path}?key=${key}` });

  it("creates an analysis, computes it in a worker and serves the sample_size CSV", async () => {
    const res = await create(odRequest(ctx.orgA.email, { analysis_name: "Trucks January" }));
    assert.equal(res.statusCode, 201);
    const { name, status: ok, uuid } = res.json();
    assert.deepEqual([name, ok], ["Trucks January", "success"]);
    assert.match(uuid, /^[0-9a-f-]{36}$/);

    const done = await waitFor(uuid, "Data Available");
    assert.deepEqual(done, {
      name: "Trucks January",
      uuid,
      status: "Data Available",
      metrics: ["od_comm", "zone_od_comm", "sample_size"],
      shapefiles: ["origin_zones", "destination_zones"],
    });

    const csv = await download("name/trucks%20january/sample_size");
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers["content-type"]), /^text\/csv/);
    // Truck days in January: Wed 1st, Mon 6th (weekdays 1-4), Sat 11th; 2 devices and 5 trips each.
    assert.equal(
      csv.body,
      [
        "data_period,day_type,mode_of_travel,days_with_data,approximate_device_count,approximate_trip_count",
        "01/01/2025 - 01/31/2025,0: Average Day (M-Su),Truck,3,2,15",
        "01/01/2025 - 01/31/2025,1: Average Weekday (M-Th),Truck,2,2,10",
        "01/01/2025 - 01/31/2025,2: Average Weekend Day (Sa-Su),Truck,1,2,5",
        "",
      ].join("\n"),
    );
    assert.equal((await download(`uuid/${uuid}/sample_size`)).body, csv.body);

    const missing = await download(`uuid/${uuid}/od_pers`);
    assert.equal(missing.statusCode, 404);
    assert.match(
      missing.json().error.message,
      /no metric "od_pers"; available: od_comm, zone_od_comm, sample_size/,
    );

    const list = (
      await ctx.app.inject({ method: "GET", url: `/api/v2/analyses?key=${ctx.orgA.key}` })
    ).json();
    const listed = list.analyses.find((a: { uuid: string }) => a.uuid === uuid);
    assert.equal(listed.progress, 1);
    assert.equal(listed.travel_mode_type, "Truck");
    // The list names each analysis' network, so the page lists those of the chosen network.
    assert.equal(listed.country, "mc");
  });

  it("cancels a running analysis; deleting it while Processing is refused", async () => {
    const { uuid } = (await create(odRequest(ctx.orgA.email, { analysis_name: "hang forever" }))).json();
    await until(async () => {
      const list = (
        await ctx.app.inject({ method: "GET", url: `/api/v2/analyses?key=${ctx.orgA.key}` })
      ).json();
      return list.analyses.find(
        (a: { uuid: string; progress: number }) => a.uuid === uuid && a.progress === 0.5,
      );
    });
    assert.equal((await statusOf(uuid)).status, "Processing");
    assert.equal((await download(`uuid/${uuid}/sample_size`)).statusCode, 409);

    const del = await lifecycle("DELETE", uuid);
    assert.equal(del.statusCode, 409);
    assert.match(del.json().error.message, /still Processing; cancel it first/);

    const cancel = await lifecycle("POST", `cancel/${uuid}`);
    assert.equal(cancel.statusCode, 200);
    assert.deepEqual(cancel.json(), {
      name: "hang forever",
      uuid,
      status: "success",
      analysis_status: "Cancelled",
    });
    assert.equal((await lifecycle("POST", `cancel/${uuid}`)).statusCode, 409);

    // The runner terminates the worker and takes the next job: a new analysis completes.
    const next = (await create(odRequest(ctx.orgA.email))).json();
    await waitFor(next.uuid, "Data Available");
    assert.equal((await statusOf(uuid)).status, "Cancelled");

    const deleted = await lifecycle("DELETE", uuid);
    assert.deepEqual(deleted.json(), {
      name: "hang forever",
      uuid,
      status: "success",
      analysis_status: "Deleted",
    });
    assert.deepEqual(await statusOf(uuid), { name: "hang forever", uuid, status: "Deleted", metrics: [] });
    assert.equal((await lifecycle("DELETE", uuid)).statusCode, 409);
  });

  it("cancels a queued analysis and frees a deleted analysis' name", async () => {
    const blocker = (await create(odRequest(ctx.orgA.email, { analysis_name: "hang briefly" }))).json();
    const queued = (await create(odRequest(ctx.orgA.email, { analysis_name: "Reused" }))).json();
    assert.equal((await lifecycle("POST", `cancel/${queued.uuid}`)).json().analysis_status, "Cancelled");
    await lifecycle("POST", `cancel/${blocker.uuid}`);
    assert.equal((await create(odRequest(ctx.orgA.email, { analysis_name: "REUSED" }))).statusCode, 409);
    assert.equal((await lifecycle("DELETE", queued.uuid)).statusCode, 200);
    const again = await create(odRequest(ctx.orgA.email, { analysis_name: "REUSED" }));
    assert.equal(again.statusCode, 201);
    // By name, the live analysis wins over the deleted one.
    assert.equal((await status([{ name: "reused" }])).json().analyses[0].uuid, again.json().uuid);
  });

  it("reports a failed computation with its reason", async () => {
    const { uuid } = (await create(odRequest(ctx.orgA.email, { analysis_name: "fail on purpose" }))).json();
    const failed = await waitFor(uuid, "Failed");
    assert.equal(failed.failure_reason, "zone set Downtown has no zone on the road network");
    const dl = await download(`uuid/${uuid}/sample_size`);
    assert.equal(dl.statusCode, 409);
    assert.match(dl.json().error.message, /it failed: zone set Downtown/);
  });

  it("rejects a duplicate name (409) and an invalid request (400) without writing anything", async () => {
    await create(odRequest(ctx.orgA.email, { analysis_name: "Unique one" }));
    const before = (
      await ctx.app.inject({ method: "GET", url: `/api/v2/analyses?key=${ctx.orgA.key}` })
    ).json();
    const clash = await create(odRequest(ctx.orgA.email, { analysis_name: " unique ONE " }));
    assert.equal(clash.statusCode, 409);
    assert.equal(clash.json().error.code, "analysis_name_taken");
    const invalid = await create(
      odRequest(ctx.orgA.email, { analysis_name: "Invalid", travel_mode_type: "Zeppelin" }),
    );
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().error.field, "travel_mode_type");
    assert.equal(invalid.json().status, "error");
    const afterwards = (
      await ctx.app.inject({ method: "GET", url: `/api/v2/analyses?key=${ctx.orgA.key}` })
    ).json();
    assert.equal(afterwards.analyses.length, before.analyses.length);
    assert.equal((await status([{ name: "Invalid" }])).json().analyses[0].status, "Not Found");
  });

  it("accepts fields of other analysis types (a vendor client's fixed body shape), ignores them with a warning", async () => {
    const res = await create(
      odRequest(ctx.orgA.email, {
        analysis_name: "Fixed shape",
        top_routes_count: "ten",
        metric_type: "speed",
        aadt_year: null,
        geography_type: "",
      }),
    );
    // Not read, so not validated: "ten" would be refused by a top-routes type. Empty values warn of nothing.
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().warnings, [
      "metric_type is not read by OD_Analysis and was ignored",
      "top_routes_count is not read by OD_Analysis and was ignored",
    ]);
    await lifecycle("POST", `cancel/${res.json().uuid}`);
  });

  it("ignores unknown fields with a warning, names the field a misspelt one meant, writes no braces", async () => {
    const res = await create(odRequest(ctx.orgA.email, { analysis_name: "Stray keys", "11": "", colour: 1 }));
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json().warnings, [
      'unknown field "11" was ignored',
      'unknown field "colour" was ignored',
    ]);
    const plain = (await create(odRequest(ctx.orgA.email, { analysis_name: "No stray" }))).json();
    assert.equal(plain.warnings, undefined);
    // Neither needs computing: cancelled, they leave the runner to the analyses other tests wait for.
    for (const uuid of [res.json().uuid, plain.uuid]) await lifecycle("POST", `cancel/${uuid}`);

    const misspelt = await create(
      odRequest(ctx.orgA.email, { analysis_name: "Typo", day_type: "Weekday|15" }),
    );
    assert.equal(misspelt.statusCode, 400);
    assert.equal(misspelt.json().error.field, "day_type");
    assert.match(misspelt.json().error.message, /did you mean day_types/);

    const braces = await create(
      odRequest(ctx.orgA.email, { oz_sets: [{ id: 1 }], dz_sets: [{ name: "{zone}" }], date_ranges: [] }),
    );
    assert.equal(braces.statusCode, 400);
    const { message, issues } = braces.json().error;
    assert.equal(issues.length, 3);
    for (const text of [message, ...issues.map((i: { message: string }) => i.message)])
      assert.doesNotMatch(text, /[{}]/, text);
    assert.match(message, /no zone set "\(zone\)"/);
  });

  it("answers 401 without a key and 403 for a login outside the organization", async () => {
    assert.equal((await create(odRequest(ctx.orgA.email), "")).statusCode, 401);
    assert.equal((await status([{ name: "x" }], "nope")).statusCode, 401);
    const res = await create(odRequest(ctx.orgB.email));
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error.field, "insight_login_email");
    const { uuid } = (await create(odRequest(ctx.orgA.email, { analysis_name: "hang guarded" }))).json();
    assert.equal((await lifecycle("POST", `cancel/${uuid}`, ctx.orgA.key, ctx.orgB.email)).statusCode, 403);
    assert.equal((await lifecycle("POST", `cancel/${uuid}`)).statusCode, 200);
  });

  it("answers unknown status entries per entry and keeps organizations apart", async () => {
    const { uuid } = (await create(odRequest(ctx.orgA.email, { analysis_name: "Private" }))).json();
    await waitFor(uuid, "Data Available");
    const res = await status([{ name: "Private" }, { uuid: "no-such-uuid" }, {}]);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().analyses.slice(1), [
      { uuid: "no-such-uuid", status: "Not Found", error: 'no analysis "no-such-uuid" in this organization' },
      { status: "Not Found", error: "give name or uuid" },
    ]);
    // Organization B sees none of A's analyses.
    const b = ctx.orgB;
    assert.equal((await status([{ uuid }], b.key)).json().analyses[0].status, "Not Found");
    assert.equal((await download(`uuid/${uuid}/sample_size`, b.key)).statusCode, 404);
    assert.equal((await download("name/Private/sample_size", b.key)).statusCode, 404);
    assert.equal((await lifecycle("DELETE", uuid, b.key, b.email)).statusCode, 404);
    assert.equal((await lifecycle("POST", `cancel/${uuid}`, b.key, b.email)).statusCode, 404);
    const list = (await ctx.app.inject({ method: "GET", url: `/api/v2/analyses?key=${b.key}` })).json();
    assert.deepEqual(list, { analyses: [], status: "success" });
  });
  it("answers one analysis with the parameters it was created with, to its organization only", async () => {
    const body = odRequest(ctx.orgA.email, {
      analysis_name: "Described",
      day_types: "Weekday|15",
      day_parts: "Morning|0609,Evening|1518",
      unit_of_measurement: "KM",
      tags: "a, b",
    });
    const { uuid } = (await create(body)).json();
    const res = await ctx.app.inject({ method: "GET", url: `/api/v2/analyses/${uuid}?key=${ctx.orgA.key}` });
    assert.equal(res.statusCode, 200);
    const { analysis } = res.json();
    const downtown = (await ctx.store.zoneSets.get(ctx.orgA.orgId, "Downtown"))!;
    const harbour = (await ctx.store.zoneSets.get(ctx.orgA.orgId, "Harbour"))!;
    assert.deepEqual(
      {
        name: analysis.name,
        analysis_type: analysis.analysis_type,
        travel_mode_type: analysis.travel_mode_type,
        output_type: analysis.output_type,
        country: analysis.country,
        oz_sets: analysis.oz_sets,
        dz_sets: analysis.dz_sets,
        date_ranges: analysis.date_ranges,
        day_types: analysis.day_types,
        day_parts: analysis.day_parts,
        unit_of_measurement: analysis.unit_of_measurement,
        tags: analysis.tags,
      },
      {
        name: "Described",
        analysis_type: "OD_Analysis",
        travel_mode_type: "Truck",
        output_type: "index",
        country: "mc",
        oz_sets: [{ name: "Downtown", uuid: downtown.uuid }],
        dz_sets: [{ name: "Harbour", uuid: harbour.uuid }],
        date_ranges: [{ start_date: "01/01/2025", end_date: "01/31/2025" }],
        day_types: [{ name: "Weekday", code: "15", label: "0: Weekday (M-F)" }],
        day_parts: [
          { name: "Morning", code: "0609", label: "0: Morning (6am-10am)" },
          { name: "Evening", code: "1518", label: "1: Evening (3pm-7pm)" },
        ],
        unit_of_measurement: "km",
        tags: ["a", "b"],
      },
    );
    assert.equal(analysis.uuid, uuid);
    assert.ok(["Processing", "Data Available"].includes(analysis.status));
    const other = await ctx.app.inject({
      method: "GET",
      url: `/api/v2/analyses/${uuid}?key=${ctx.orgB.key}`,
    });
    assert.equal(other.statusCode, 404);
    assert.equal(other.json().error.code, "unknown_analysis");
    const unknown = await ctx.app.inject({
      method: "GET",
      url: `/api/v2/analyses/no-such-uuid?key=${ctx.orgA.key}`,
    });
    assert.equal(unknown.statusCode, 404);
  });

  it("lists exactly the produced metrics when trip and traveler attributes are asked for", async () => {
    const body = odRequest(ctx.orgA.email, {
      analysis_name: "Attributes",
      trip_attributes: true,
      traveler_attributes: true,
      enable_speed_percentile: true,
    });
    const { uuid } = (await create(body)).json();
    const done = await waitFor(uuid, "Data Available");
    assert.deepEqual(done.metrics, [
      "od_comm",
      "zone_od_comm",
      "od_trip_duration",
      "od_trip_length",
      "od_trip_speed",
      "od_trip_circuity",
      "od_speed_percentile",
      "od_trip_purpose",
      "od_income",
      "sample_size",
    ]);
    for (const metric of done.metrics)
      assert.equal((await download(`uuid/${uuid}/${metric}`)).statusCode, 200, metric);
    const speed = await download(`uuid/${uuid}/od_trip_speed`);
    assert.match(speed.body.split("\n")[0], /,day_part,trip_speed_mph_0_10,.*,trip_speed_mph_80_plus$/);
  });

  it("refuses to delete a zone set an analysis uses (409 naming it) until the analysis is deleted", async () => {
    const removeSet = () =>
      ctx.app.inject({ method: "DELETE", url: `/api/v2/zone_sets/Counted?key=${ctx.orgA.key}` });
    const body = odRequest(ctx.orgA.email, {
      analysis_name: "Counted trucks",
      dz_sets: [{ name: "Counted" }],
    });
    const { uuid } = (await create(body)).json();
    await waitFor(uuid, "Data Available");
    const refused = await removeSet();
    assert.equal(refused.statusCode, 409);
    assert.deepEqual(refused.json().error, {
      code: "zone_set_in_use",
      message: 'zone set "Counted" is used by the analyses "Counted trucks"; delete them first',
      field: "name_or_uuid",
    });
    assert.equal((await lifecycle("DELETE", uuid)).statusCode, 200);
    assert.equal((await removeSet()).statusCode, 200);
  });
});
