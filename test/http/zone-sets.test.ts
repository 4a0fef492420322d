import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeTestApp, type TestContext } from "../helpers/app.js";

const square = (lon: number, lat: number, d = 0.01) => ({
  type: "Polygon",
  coordinates: [
    [
      [lon, lat],
      [lon + d, lat],
      [lon + d, lat + d],
      [lon, lat + d],
      [lon, lat],
    ],
  ],
});

const zone = (name: string, lon: number, extra: Record<string, unknown> = {}) => ({
  type: "Feature",
  geometry: square(lon, 48.1),
  properties: { name, ...extra },
});

describe("/api/v2/zone_sets", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
  });
  after(() => ctx.app.close());

  const post = (key: string, payload: object) =>
    ctx.app.inject({ method: "POST", url: `/api/v2/zone_sets?key=${key}`, payload });
  const get = (key: string, path = "") =>
    ctx.app.inject({ method: "GET", url: `/api/v2/zone_sets${path}?key=${key}` });
  const del = (key: string, path: string) =>
    ctx.app.inject({ method: "DELETE", url: `/api/v2/zone_sets${path}?key=${key}` });
  const body = (email: string, name: string | undefined, zones: object[]) => ({
    zones: { type: "FeatureCollection", features: zones },
    ...(name === undefined ? {} : { zone_set_name: name }),
    insight_login_email: email,
  });
  const listNames = async (key: string) =>
    (await get(key)).json().zone_sets.map((z: { name: string }) => z.name) as string[];

  it("creates a set (201), lists it, returns it as GeoJSON and deletes it", async () => {
    const res = await post(
      ctx.orgA.key,
      body(ctx.orgA.email, "  Munich centre ", [zone("A", 11.5), zone("B", 11.6)]),
    );
    assert.equal(res.statusCode, 201);
    const created = res.json();
    assert.equal(created.name, "Munich centre");
    assert.equal(created.status, "success");
    assert.match(created.uuid, /^[0-9a-f-]{36}$/);

    const list = (await get(ctx.orgA.key)).json();
    assert.equal(list.status, "success");
    const summary = list.zone_sets.find((z: { uuid: string }) => z.uuid === created.uuid);
    assert.equal(summary.zone_count, 2);
    assert.equal(summary.geom_type, "polygon");
    assert.equal(summary.with_calibration, false);
    // The box of both zones: the page lists the sets of the chosen network with it.
    assert.deepEqual(summary.bbox, [11.5, 48.1, 11.61, 48.11]);

    const one = await get(ctx.orgA.key, "/munich%20CENTRE");
    assert.equal(one.statusCode, 200);
    const fc = one.json();
    assert.equal(fc.type, "FeatureCollection");
    assert.equal(fc.uuid, created.uuid);
    assert.equal(fc.name, "Munich centre");
    assert.equal(fc.features[0].geometry.type, "MultiPolygon");
    assert.deepEqual(fc.features[1].properties, {
      name: "B",
      id: null,
      is_pass: 0,
      direction: null,
      is_bidi: 0,
      geom_type: "polygon",
    });

    const gone = await del(ctx.orgA.key, `/${created.uuid}`);
    assert.equal(gone.statusCode, 200);
    assert.deepEqual(gone.json(), { status: "success", name: "Munich centre", uuid: created.uuid });
    assert.equal((await get(ctx.orgA.key, `/${created.uuid}`)).statusCode, 404);
    assert.equal((await del(ctx.orgA.key, `/${created.uuid}`)).statusCode, 404);
  });

  it("names an unnamed set after its uuid", async () => {
    const res = await post(ctx.orgA.key, body(ctx.orgA.email, undefined, [zone("A", 11.5)]));
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().name, res.json().uuid);
  });

  it("answers 409 for a name taken case-insensitively in the organization", async () => {
    assert.equal((await post(ctx.orgA.key, body(ctx.orgA.email, "Dup", [zone("A", 11.5)]))).statusCode, 201);
    const res = await post(ctx.orgA.key, body(ctx.orgA.email, "dUP", [zone("A", 11.5)]));
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().error.code, "zone_set_name_taken");
    assert.equal(res.json().error.field, "zone_set_name");
  });

  it("answers 403 when the login is not a member of the key's organization", async () => {
    const res = await post(ctx.orgA.key, body(ctx.orgB.email, "Not mine", [zone("A", 11.5)]));
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error.code, "not_a_member");
    assert.ok(!(await listNames(ctx.orgA.key)).includes("Not mine"));
  });

  it("answers 401 without a key", async () => {
    const res = await ctx.app.inject({ method: "GET", url: "/api/v2/zone_sets" });
    assert.equal(res.statusCode, 401);
    const posted = await ctx.app.inject({
      method: "POST",
      url: "/api/v2/zone_sets",
      payload: body(ctx.orgA.email, "x", [zone("A", 1)]),
    });
    assert.equal(posted.statusCode, 401);
  });

  it("keeps organizations apart", async () => {
    const res = await post(ctx.orgA.key, body(ctx.orgA.email, "Shared name", [zone("A", 11.5)]));
    const { uuid } = res.json();
    assert.equal((await get(ctx.orgB.key, `/${uuid}`)).statusCode, 404);
    assert.equal((await get(ctx.orgB.key, "/Shared%20name")).statusCode, 404);
    assert.equal((await del(ctx.orgB.key, `/${uuid}`)).statusCode, 404);
    assert.ok(!(await listNames(ctx.orgB.key)).includes("Shared name"));
    assert.equal(
      (await post(ctx.orgB.key, body(ctx.orgB.email, "Shared name", [zone("A", 2)]))).statusCode,
      201,
    );
    assert.equal(
      (await get(ctx.orgA.key, `/${uuid}`)).json().features[0].geometry.coordinates[0][0][0][0],
      11.5,
    );
  });

  it("rejects an invalid set with every problem, naming zone and field, and writes nothing", async () => {
    const before = await listNames(ctx.orgA.key);
    const res = await post(
      ctx.orgA.key,
      body(ctx.orgA.email, "Broken", [
        zone("Main St", 11.5),
        zone("Side", 11.6),
        zone("main st", 11.7, { direction: 400 }),
      ]),
    );
    assert.equal(res.statusCode, 400);
    const { status, error } = res.json();
    assert.equal(status, "error");
    assert.equal(error.code, "validation_failed");
    assert.equal(error.field, "zones.features[2].properties.direction");
    assert.deepEqual(
      error.issues.map((i: { field: string }) => i.field),
      ["zones.features[2].properties.direction", "zones.features[2].properties.name"],
    );
    assert.match(error.message, /zone "main st" \(#2\): direction must be an integer 0\.\.359/);
    assert.deepEqual(await listNames(ctx.orgA.key), before);
  });

  it("answers 400 naming the field when the body does not match the schema", async () => {
    const res = await post(ctx.orgA.key, { zones: [] });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.field, "insight_login_email");
    assert.doesNotMatch(res.body, /at .*\.ts:\d+/);
  });

  it("documents the routes in OpenAPI", async () => {
    const paths = (await ctx.app.inject({ method: "GET", url: "/docs/openapi.json" })).json().paths;
    assert.ok(paths["/api/v2/zone_sets"]);
    assert.ok(paths["/api/v2/zone_sets/{name_or_uuid}"]);
  });
});
