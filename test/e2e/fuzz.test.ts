import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Rng } from "../../src/engine/simulate/rng.js";
import { demoKey, fetchUnlessShed, startServer, type RunningServer } from "../helpers/server.js";

/** Requests generated; each is one real HTTP call to the running server. */
const REQUESTS = 3000;
const SEED = 20261125;

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
};
interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: string[];
  body?: Schema;
}

/** Every documented operation under /api/v2 and /counts/v1, with what it takes. */
function operationsOf(doc: {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { in: string; name: string }[];
        requestBody?: { content: Record<string, { schema: Schema }> };
      }
    >
  >;
}): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!path.startsWith("/api/v2/") && !path.startsWith("/counts/v1/")) continue;
    for (const [method, op] of Object.entries(methods)) {
      const params = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        query: params.filter((p) => p.in === "query").map((p) => p.name),
        body: op.requestBody?.content["application/json"]?.schema,
      });
    }
  }
  return ops;
}

/** Values that tend to break parsers and rules: edge numbers, odd strings, wrong shapes. */
function junk(rng: Rng, depth = 0): unknown {
  const pick = rng.int(16);
  switch (pick) {
    case 0:
      return null;
    case 1:
      return [-1, 0, 1, 1e308, -1e308, 2 ** 53, 0.5, 181, -91, 1e-320][rng.int(10)];
    case 2:
      return ["", " ", "a".repeat(rng.int(300)), "🚲".repeat(60), "%zz", "\u0000", "../../etc", "all"][
        rng.int(8)
      ];
    case 3:
      return rng.next() < 0.5;
    case 4:
      return depth > 3 ? [] : Array.from({ length: rng.int(4) }, () => junk(rng, depth + 1));
    case 5:
      return depth > 3
        ? {}
        : { [["type", "coordinates", "__proto__", "constructor", "x"][rng.int(5)]]: junk(rng, depth + 1) };
    case 6:
      return [rng.next() * 360 - 180, rng.next() * 180 - 90];
    case 7:
      return {
        type: ["Polygon", "polygon", "MultiPolygon", "Point", "point", "LineString"][rng.int(6)],
        coordinates: junk(rng, depth + 1),
      };
    default:
      return [
        "vehicle",
        "truck",
        "bike",
        "ped",
        "mc",
        "MC",
        "Personal",
        "All_Vehicles",
        "01/01/2026",
        "2026-02",
      ][rng.int(10)];
  }
}

/** A value shaped by the schema most of the time, with junk in random places. */
function valueFor(schema: Schema | undefined, rng: Rng, depth = 0): unknown {
  if (!schema || depth > 5 || rng.next() < 0.12) return junk(rng, depth);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return valueFor(alternatives[rng.int(alternatives.length)], rng, depth + 1);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[rng.int(schema.enum.length)];
  const type = Array.isArray(schema.type) ? schema.type[rng.int(schema.type.length)] : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries(schema.properties ?? {}))
        if (schema.required?.includes(name) ? rng.next() < 0.95 : rng.next() < 0.5)
          out[name] = valueFor(prop, rng, depth + 1);
      return out;
    }
    case "array":
      return Array.from({ length: rng.int(5) }, () => valueFor(schema.items, rng, depth + 1));
    case "integer":
      return rng.int(40) - 5;
    case "number":
      return rng.next() * 400 - 200;
    case "boolean":
      return rng.next() < 0.5;
    case "string":
      return junk(rng, depth + 1);
    default:
      return junk(rng, depth);
  }
}

const PATH_VALUES = [
  "mc",
  "MC",
  "vehicle",
  "Truck",
  "trips_volume",
  "x",
  "%zz",
  "a".repeat(120),
  "0",
  "ünï",
  "..%2f",
];

describe("fuzz: generated requests over every route (real process)", () => {
  let server: RunningServer;
  let key: string;
  let ops: Operation[];
  before(async () => {
    server = await startServer();
    key = demoKey(server.dataDir);
    const doc = await fetchUnlessShed(`${server.baseUrl}/docs/openapi.json`);
    const text = await doc.text();
    assert.equal(doc.status, 200, text);
    ops = operationsOf(JSON.parse(text));
  });
  after(() => server?.stop());

  it(`answers ${REQUESTS} generated requests without a 5xx and stays up`, async () => {
    assert.ok(ops.length >= 20, `${ops.length} operations`);
    const rng = new Rng(SEED, "fuzz");
    const failures: string[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < REQUESTS; i++) {
      const op = ops[rng.int(ops.length)];
      seen.add(`${op.method} ${op.path}`);
      let path = op.path;
      for (const name of op.pathParams)
        path = path.replace(
          `{${name}}`,
          encodeURIComponent(PATH_VALUES[rng.int(PATH_VALUES.length)]).replace("%25zz", "%zz"),
        );
      const query = new URLSearchParams();
      const keyChoice = rng.int(10);
      if (keyChoice < 7) query.append("key", key);
      else if (keyChoice === 7) query.append("key", "sf_" + "x".repeat(43));
      else if (keyChoice === 8) for (const k of [key, key]) query.append("key", k);
      for (const name of op.query.filter((q) => q !== "key"))
        if (rng.next() < 0.5) query.append(name, String(junk(rng)));
      const headers: Record<string, string> = {};
      if (op.path.startsWith("/counts/") && rng.next() < 0.85) headers["x-service-key"] = key;
      let body: string | undefined;
      if (op.method !== "GET" && op.method !== "DELETE") {
        const shape = rng.int(20);
        headers["content-type"] = shape === 0 ? "text/plain" : "application/json";
        body = shape === 1 ? '{"broken": ' : shape === 2 ? "" : JSON.stringify(valueFor(op.body, rng));
      }
      const url = `${server.baseUrl}${path}?${query}`;
      const res = await fetchUnlessShed(url, { method: op.method, headers, body });
      const text = await res.text();
      if (res.status >= 500)
        failures.push(`${res.status} ${op.method} ${path} ${body?.slice(0, 300)} → ${text.slice(0, 200)}`);
      else if (res.status >= 400 && !/"status":\s*"error"/.test(text))
        failures.push(`${res.status} without the error body: ${op.method} ${path} → ${text.slice(0, 200)}`);
    }
    assert.deepEqual(failures, []);
    assert.equal(seen.size, ops.length, "every route was called");
    const health = await fetch(`${server.baseUrl}/healthz`);
    assert.equal(health.status, 200, "the process is still up");
  });
});
