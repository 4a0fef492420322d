import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.js";
import { MAX_GEOMETRY_POSITIONS } from "../../src/domain/geometry-limits.js";
import { storeNetworks } from "../../src/app/networks.js";
import type { LonLat } from "../../src/engine/network/types.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeOrg, type TestOrg } from "../helpers/app.js";
import { gridNetwork } from "../helpers/counts.js";
import { at } from "../helpers/network.js";

/** A closed ring of `positions` positions (the last repeats the first) on a circle around (x, y) in metres. */
function circle(x: number, y: number, radiusM: number, positions: number): LonLat[] {
  const ring = Array.from({ length: positions - 1 }, (_, i) => {
    const a = (2 * Math.PI * i) / (positions - 1);
    return at(x + radiusM * Math.cos(a), y + radiusM * Math.sin(a));
  });
  return [...ring, ring[0]];
}

describe("one cap on geometry size, and body limits per route", () => {
  let app: FastifyInstance;
  let org: TestOrg;
  before(async () => {
    const store = new SqliteStore(":memory:");
    app = await buildApp({
      store,
      networks: storeNetworks(store.network),
    });
    org = await makeOrg(store, "Limits");
    const info = { country: "mc", source: "test", segmentCount: 0, importedAt: new Date().toISOString() };
    await store.network.replaceCountry(info, gridNetwork());
  });
  after(() => app.close());

  const counts = (path: string, payload: object) =>
    app.inject({ method: "POST", url: `/counts/v1/${path}`, headers: { "x-service-key": org.key }, payload });
  const v2 = (path: string, payload: object | string) =>
    app.inject({
      method: "POST",
      url: `/api/v2/${path}?key=${org.key}`,
      headers: { "content-type": "application/json" },
      payload,
    });
  const polygonSelection = (ring: LonLat[], geomMode = "within") => ({
    geometry: { polygon: { type: "polygon", coordinates: [ring], geom_mode: geomMode } },
    country: "mc",
    mode: "vehicle",
  });
  const segmentIds = async (payload: object) => {
    const res = await counts("geometry", { ...payload, page_size: 1000 });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as unknown[][]).map((row) => row[0]).sort();
  };

  it("selects with a polygon of exactly the cap, as a coarse polygon of the same circle does", async () => {
    const fine = await segmentIds(polygonSelection(circle(200, 200, 150, MAX_GEOMETRY_POSITIONS)));
    const coarse = await segmentIds(polygonSelection(circle(200, 200, 150, 65)));
    assert.ok(fine.length > 0);
    assert.deepEqual(fine, coarse);
  });

  it("refuses a counts polygon over the cap on /geometry, /segmentcount and /metrics", async () => {
    const big = polygonSelection(circle(200, 200, 150, MAX_GEOMETRY_POSITIONS + 1), "intersects");
    for (const path of ["geometry", "segmentcount", "metrics"]) {
      const metrics = {
        fields: ["trips_volume"],
        day_part: "all",
        day_type: "all",
        direction: "bidirectional",
        date: { year: 2026, month: 2 },
        data_version: 1,
      };
      const res = await counts(path, path === "metrics" ? { ...big, ...metrics } : big);
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`);
      assert.equal(res.json().error.code, "geometry_too_large");
      assert.equal(res.json().error.field, "geometry.polygon.coordinates");
      assert.match(res.json().error.message, /more than 10,000 positions/);
    }
  });

  it("refuses a zone over the cap in a zone set, naming the zone", async () => {
    const zone = (positions: number) => ({
      type: "Feature",
      geometry: { type: "Polygon", coordinates: [circle(200, 200, 150, positions)] },
      properties: { name: `zone of ${positions}` },
    });
    const res = await v2("zone_sets", {
      zone_set_name: "big",
      insight_login_email: org.email,
      zones: { type: "FeatureCollection", features: [zone(100), zone(MAX_GEOMETRY_POSITIONS + 1)] },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().error.field, "zones.features[1].geometry");
    assert.match(res.json().error.message, /more than 10,000 positions/);
  });

  it("refuses an osm_ids search polygon over the cap", async () => {
    const res = await v2("osm_ids/search", {
      geometry: {
        polygon: { type: "polygon", coordinates: [circle(200, 200, 150, MAX_GEOMETRY_POSITIONS + 1)] },
      },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().error.field, "geometry.polygon.coordinates");
  });

  it("answers 413 body_too_large past each route's body limit", async () => {
    const padded = (bytes: number) => JSON.stringify({ message: "x", pad: " ".repeat(bytes) });
    const cases: [string, number][] = [
      ["debug/echo", 100 * 1024],
      ["analyses", 2 * 1024 * 1024],
      ["osm_ids/search", 3 * 1024 * 1024],
    ];
    for (const [path, bytes] of cases) {
      const res = await v2(path, padded(bytes));
      assert.equal(res.statusCode, 413, `${path}: ${res.body.slice(0, 200)}`);
      assert.equal(res.json().error.code, "body_too_large");
    }
    const countsRes = await app.inject({
      method: "POST",
      url: "/counts/v1/metrics",
      headers: { "x-service-key": org.key, "content-type": "application/json" },
      payload: padded(3 * 1024 * 1024),
    });
    assert.equal(countsRes.statusCode, 413);
  });
});
