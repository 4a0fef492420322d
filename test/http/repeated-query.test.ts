import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeTestApp, type TestContext } from "../helpers/app.js";

interface Operation {
  method: string;
  path: string;
  query: string[];
}

interface OpenApiParameter {
  in: string;
  name: string;
}

/** Every documented /api/v2 and /counts/v1 operation with its query parameters, from the OpenAPI document. */
function operations(doc: { paths: Record<string, Record<string, { parameters?: OpenApiParameter[] }>> }) {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods)) {
      const query = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      ops.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "x"), query });
    }
  return ops.filter((o) => o.path.startsWith("/api/v2/") || o.path.startsWith("/counts/v1/"));
}

describe("a repeated query parameter on every route", () => {
  let ctx: TestContext;
  let ops: Operation[];
  before(async () => {
    ctx = await makeTestApp();
    ops = operations((await ctx.app.inject({ method: "GET", url: "/docs/openapi.json" })).json());
  });
  after(() => ctx.app.close());

  const send = (op: Operation, query: string) =>
    ctx.app.inject({
      method: op.method as "GET",
      url: `${op.path}?${query}`,
      headers: op.path.startsWith("/counts/") ? { "x-service-key": ctx.orgA.key } : {},
    });

  it("finds the routes and their query parameters", () => {
    assert.ok(ops.length >= 20, `only ${ops.length} operations documented`);
    assert.ok(ops.some((o) => o.query.includes("page")));
  });

  it("answers 400 invalid_request naming `key` when the key is given twice", async () => {
    for (const op of ops.filter((o) => o.path.startsWith("/api/v2/"))) {
      for (const query of [`key=${ctx.orgA.key}&key=${ctx.orgA.key}`, "key=a&key=b"]) {
        const res = await send(op, query);
        assert.equal(res.statusCode, 400, `${op.method} ${op.path}?${query}: ${res.body}`);
        assert.deepEqual(res.json().error, {
          code: "invalid_request",
          message: "query parameter key must be given once",
          field: "key",
        });
      }
    }
  });

  it("answers 400 naming every other repeated parameter, with a valid key", async () => {
    let checked = 0;
    for (const op of ops)
      for (const name of op.query.filter((q) => q !== "key")) {
        const key = op.path.startsWith("/api/v2/") ? `key=${ctx.orgA.key}&` : "";
        const res = await send(op, `${key}${name}=1&${name}=2`);
        assert.equal(res.statusCode, 400, `${op.method} ${op.path} ${name}: ${res.body}`);
        assert.equal(res.json().error.field, name);
        checked++;
      }
    assert.ok(checked >= 4);
  });
});
