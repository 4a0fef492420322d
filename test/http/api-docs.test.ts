import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ANALYSIS_REQUEST_FIELDS } from "../../src/domain/analyses/request.js";
import { ANALYSIS_TYPES, TRAVEL_MODES } from "../../src/shared/vocabulary.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";

type BodySchema = { properties: Record<string, { type?: string; enum?: string[] }>; required?: string[] };
type Operation = {
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema: BodySchema }> };
};
type OpenApi = {
  info: { title: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
};

describe("API documentation (/docs)", () => {
  let ctx: TestContext;
  let doc: OpenApi;
  before(async () => {
    ctx = await makeTestApp();
    doc = (await ctx.app.inject("/docs/openapi.json")).json();
  });
  after(() => ctx.app.close());

  const operationsUnder = (prefix: string) =>
    Object.entries(doc.paths)
      .filter(([path]) => path.startsWith(prefix))
      .flatMap(([path, methods]) => Object.entries(methods).map(([m, op]) => ({ name: `${m} ${path}`, op })));
  const schemesOf = (op: Operation) => (op.security ?? []).flatMap((s) => Object.keys(s)).sort();

  it("declares the three ways a key is sent", () => {
    const schemes = Object.values(doc.components.securitySchemes).map((s) => `${s.in}:${s.name}`);
    assert.deepEqual(schemes.sort(), ["header:x-service-key", "header:x-stl-key", "query:key"]);
  });

  it("lets Authorize fill every /api/v2 call with the query key or x-stl-key", () => {
    const ops = operationsUnder("/api/v2/");
    assert.ok(ops.length >= 15);
    for (const { name, op } of ops) assert.deepEqual(schemesOf(op), ["queryKey", "stlKey"], name);
  });

  it("lets Authorize fill every /counts/v1 call with x-service-key or x-stl-key", () => {
    const ops = operationsUnder("/counts/v1/");
    assert.ok(ops.length >= 5);
    for (const { name, op } of ops) assert.deepEqual(schemesOf(op), ["serviceKey", "stlKey"], name);
  });

  it("shows the real body of POST /api/v2/analyses, built from the request schema", () => {
    const body = doc.paths["/api/v2/analyses"].post.requestBody!.content["application/json"].schema;
    assert.deepEqual(Object.keys(body.properties), [...ANALYSIS_REQUEST_FIELDS]);
    assert.deepEqual(body.required, ["insight_login_email"]);
    assert.deepEqual(body.properties.travel_mode_type.enum, [...TRAVEL_MODES]);
    assert.deepEqual(body.properties.analysis_type.enum, [...ANALYSIS_TYPES]);
    assert.equal(body.properties.oz_sets.type, "array");
    assert.equal(body.properties.traveler_attributes.type, "boolean");
  });

  it("shows Streetflow's title and logo instead of Fastify's", async () => {
    assert.equal(doc.info.title, "Streetflow");
    const page = await ctx.app.inject("/docs/");
    assert.match(page.body, /<title>Streetflow API<\/title>/);
    const init = (await ctx.app.inject("/docs/static/swagger-initializer.js")).body;
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(init);
    assert.ok(logo, "the initializer replaces the logo");
    assert.match(Buffer.from(logo[1], "base64").toString(), />Streetflow</);
  });
});
