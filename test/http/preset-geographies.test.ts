import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { importNetwork } from "../../src/app/network-import.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../helpers/temp-dir.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/boundaries.osm", import.meta.url));

describe("GET /api/v2/preset_geographies", () => {
  let ctx: TestContext;
  const get = (path: string, key = ctx.orgA.key) =>
    ctx.app.inject({ method: "GET", url: `/api/v2${path}?key=${key}` });

  before(async () => {
    const dir = tempDir("streetflow-presets-");
    ctx = await makeTestApp(new SqliteStore(join(dir, "db.sqlite")));
    await importNetwork({ store: ctx.store, networks: ctx.networks }, FIXTURE, "MC", () => {});
  });
  after(() => ctx.app.close());

  it("lists the geography types the import found, with their area counts", async () => {
    const res = await get("/preset_geographies/MC");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res
        .json()
        .geography_types.map((t: { geography_type: string; areas: number }) => [t.geography_type, t.areas]),
      [
        ["admin_10", 1],
        ["admin_8", 1],
        ["zip", 1],
      ],
    );
  });

  it("gives one type's areas as GeoJSON, postal codes known by their code", async () => {
    const admin = (await get("/preset_geographies/mc/ADMIN_8")).json();
    assert.equal(admin.type, "FeatureCollection");
    assert.deepEqual(admin.features[0].properties, {
      area_id: "1001",
      osm_id: 1001,
      name: "Square Town",
      geography_type: "admin_8",
    });
    assert.equal(admin.features[0].geometry.type, "Polygon");
    const zip = (await get("/preset_geographies/mc/zip")).json();
    assert.equal(zip.features[0].properties.area_id, "98000");
  });

  it("answers an unknown geography type with a 400 listing the country's valid ones", async () => {
    const res = await get("/preset_geographies/mc/blkgrp");
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.status, "error");
    assert.equal(body.error.code, "unknown_geography_type");
    assert.match(body.error.message, /valid: admin_10, admin_8, zip/);
    assert.match(body.error.message, /census unit/);
  });

  it("answers a country without a network with 404, and a request without a key with 401", async () => {
    const unknown = await get("/preset_geographies/zz");
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, "unknown_country");
    assert.equal((await get("/preset_geographies/zz/admin_8")).statusCode, 404);
    const noKey = await ctx.app.inject({ method: "GET", url: "/api/v2/preset_geographies/mc" });
    assert.equal(noKey.statusCode, 401);
  });

  it("replaces the presets when the country is imported again", async () => {
    const rt = { store: ctx.store, networks: ctx.networks };
    const tJunction = fileURLToPath(new URL("../fixtures/t-junction.osm", import.meta.url));
    await importNetwork(rt, tJunction, "mc", () => {});
    assert.deepEqual((await get("/preset_geographies/mc")).json().geography_types, []);
    await importNetwork(rt, FIXTURE, "mc", () => {});
  });
});
