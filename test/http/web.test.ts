import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { buildWeb } from "../../src/web/build.js";
import {
  ACCESS_CAR,
  segmentIdOf,
  type LonLat,
  type RoadClass,
  type Segment,
} from "../../src/engine/network/types.js";
import { gridNetwork } from "../helpers/grid-network.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";

function segment(wayId: number, roadClass: RoadClass, name: string | null, coords: LonLat[]): Segment {
  return {
    id: segmentIdOf(wayId, 0),
    wayId,
    index: 0,
    roadClass,
    highway: roadClass,
    roadType: "Local",
    oneway: false,
    speedKph: 30,
    name,
    lengthM: 100,
    fromNode: wayId * 2,
    toNode: wayId * 2 + 1,
    access: ACCESS_CAR,
    coords,
  };
}

/** Country zz: three segments spread over 7.00..7.02 E, 45.00..45.01 N. */
const ZZ = [
  segment(1, "residential", "Alpha Street", [
    [7.0, 45.0],
    [7.001, 45.0],
  ]),
  segment(2, "primary", "Beta Avenue", [
    [7.01, 45.0],
    [7.01, 45.01],
  ]),
  segment(3, "footway", null, [
    [7.02, 45.005],
    [7.019, 45.006],
  ]),
];

const info = (country: string, n: number) => ({
  country,
  source: "hand-built",
  segmentCount: n,
  importedAt: "2026-01-01T00:00:00Z",
});

describe("GET /api/v2/networks", () => {
  let ctx: TestContext;
  /** A 101 × 101 grid: 20,200 segments, 200 primary and 100 secondary, just over the cap. */
  const grid = gridNetwork({ size: 101, spacingM: 50 }).segments;
  before(async () => {
    ctx = await makeTestApp();
    await ctx.store.network.replaceCountry({ ...info("zz", ZZ.length), timeZone: "Asia/Tokyo" }, ZZ);
    await ctx.store.network.replaceCountry(info("gg", grid.length), grid);
  });
  after(() => ctx.app.close());

  const get = (url: string, key: string | null = ctx.orgA.key) =>
    ctx.app.inject({ method: "GET", url: key ? `${url}${url.includes("?") ? "&" : "?"}key=${key}` : url });

  it("needs a key", async () => {
    assert.equal((await get("/api/v2/networks", null)).statusCode, 401);
    assert.equal((await get("/api/v2/networks/zz/segments", null)).statusCode, 401);
    const res = await get("/api/v2/networks", "sf_not_a_key");
    assert.equal(res.json().error.code, "unauthorized");
  });

  it("lists networks with segment count and bounding box", async () => {
    const res = await get("/api/v2/networks");
    assert.equal(res.statusCode, 200);
    const [gg, zz] = res.json().networks;
    assert.deepEqual(zz, {
      country: "zz",
      segment_count: 3,
      imported_at: "2026-01-01T00:00:00Z",
      time_zone: "Asia/Tokyo",
      bbox: [7.0, 45.0, 7.02, 45.01],
      last_trip_month: null,
    });
    assert.equal(gg.country, "gg");
    // Imported without a zone and not in the country table: UTC.
    assert.equal(gg.time_zone, "UTC");
    assert.equal(gg.segment_count, 20_200);
  });

  it("says each network's latest month with trips, so the page can open on the one with data", async () => {
    await ctx.store.tripStats.addDayCounts("gg", [
      { day: "2025-11-30", vehicleClass: "personal", source: "lbs", trips: 4, devices: 2 },
      { day: "2026-02-03", vehicleClass: "bicycle", source: "lbs", trips: 1, devices: 1 },
      { day: "2026-01-10", vehicleClass: "heavy_commercial", source: "telematics", trips: 2, devices: 1 },
    ]);
    const networks = (await get("/api/v2/networks")).json().networks as {
      country: string;
      last_trip_month: string | null;
    }[];
    assert.deepEqual(
      networks.map((n) => [n.country, n.last_trip_month]),
      [
        ["gg", "2026-02"],
        ["zz", null],
      ],
    );
  });

  it("answers the segments meeting a bbox as GeoJSON, main roads first", async () => {
    const res = await get("/api/v2/networks/ZZ/segments?bbox=7.005,44.99,7.03,45.02");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      type: "FeatureCollection",
      total: 2,
      truncated: false,
      features: [
        {
          type: "Feature",
          geometry: { type: "LineString", coordinates: ZZ[1].coords },
          properties: { segment_id: 20_000, road_class: "primary", name: "Beta Avenue" },
        },
        {
          type: "Feature",
          geometry: { type: "LineString", coordinates: ZZ[2].coords },
          properties: { segment_id: 30_000, road_class: "footway", name: null },
        },
      ],
    });
  });

  it("answers the whole network without a bbox", async () => {
    const res = await get("/api/v2/networks/zz/segments");
    assert.deepEqual(
      res.json().features.map((f: { properties: { segment_id: number } }) => f.properties.segment_id),
      [20_000, 10_000, 30_000],
    );
  });

  it("caps the answer at 20,000 features, keeping the main roads", async () => {
    const res = await get("/api/v2/networks/gg/segments");
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.total, 20_200);
    assert.equal(body.truncated, true);
    assert.equal(body.features.length, 20_000);
    const classes = (body.features as { properties: { road_class: string } }[]).map(
      (f) => f.properties.road_class,
    );
    assert.equal(classes.filter((c) => c === "primary").length, 200);
    assert.equal(classes.filter((c) => c === "secondary").length, 100);
  });

  it("rejects a bad bbox with 400 invalid_bbox", async () => {
    for (const bbox of [
      "7,45,7.1",
      "7,45,x,46",
      "7,45,,46",
      "8,45,7,46",
      "7,46,8,45",
      "-181,0,0,1",
      "0,-91,1,0",
    ]) {
      const res = await get(`/api/v2/networks/zz/segments?bbox=${bbox}`);
      assert.equal(res.statusCode, 400, bbox);
      assert.equal(res.json().error.code, "invalid_bbox", bbox);
      assert.equal(res.json().error.field, "bbox");
    }
  });

  it("answers 404 unknown_country for a country without a network", async () => {
    const res = await get("/api/v2/networks/xx/segments?bbox=0,0,1,1");
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error.code, "unknown_country");
  });

  it("documents the endpoints in the OpenAPI document", async () => {
    const paths = (await ctx.app.inject("/docs/openapi.json")).json().paths;
    assert.ok(paths["/api/v2/networks"]);
    assert.ok(paths["/api/v2/networks/{country}/segments"]);
  });
});

describe("the web application at /", () => {
  let dir: string;
  let app: FastifyInstance;
  const appServing = (webRoot: string) => {
    const store = new SqliteStore(":memory:");
    return buildApp({ store, networks: new NetworkRegistry(() => []), webRoot });
  };
  before(async () => {
    // A private build, so the test does not depend on (or disturb) dist/web.
    dir = await mkdtemp(join(tmpdir(), "streetflow-web-"));
    await buildWeb(dir);
    app = await appServing(dir);
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves the page, which loads the bundle and the styles", async () => {
    const res = await app.inject("/");
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
    assert.equal(res.headers["cache-control"], "no-cache");
    assert.match(res.body, /<script type="module" src="main.js"><\/script>/);
    assert.match(res.body, /<label for="api-key">API key<\/label>/);
    // Browsers ask for an icon on every page load; without one each load logs a 404.
    assert.match(res.body, /<link rel="icon" href="favicon.svg" type="image\/svg\+xml" \/>/);
  });

  it("serves the bundle, the maplibre worker and the CSS with their content types", async () => {
    const expected: [string, string][] = [
      ["/main.js", "application/javascript; charset=utf-8"],
      ["/maplibre-gl-worker.mjs?v=6.17.0", "application/javascript; charset=utf-8"],
      ["/styles.css", "text/css; charset=utf-8"],
      ["/maplibre-gl.css", "text/css; charset=utf-8"],
      ["/favicon.svg", "image/svg+xml"],
      ["/method.html", "text/html; charset=utf-8"],
    ];
    for (const [url, type] of expected) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers["content-type"], type, url);
    }
    assert.match((await app.inject("/main.js")).body, /maplibre-gl-worker\.mjs/);
  });

  it("keeps the API, the docs and JSON 404s working beside it", async () => {
    assert.equal((await app.inject("/healthz")).json().status, "ok");
    assert.equal((await app.inject("/docs")).statusCode, 200);
    assert.equal((await app.inject("/api/v2/networks")).statusCode, 401);
    const missing = await app.inject("/no-such-file.js");
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, "not_found");
    const paths = Object.keys((await app.inject("/docs/openapi.json")).json().paths);
    assert.ok(!paths.includes("/main.js"), "static files stay out of the API document");
  });

  it("answers 503 with instructions when the bundle is not built", async () => {
    const bare = await appServing(join(dir, "missing"));
    const res = await bare.inject("/");
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
    assert.match(res.body, /npm run build/);
    await bare.close();
  });
});
