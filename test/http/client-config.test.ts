import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.js";
import { basemapOf, configFromEnv } from "../../src/config/config.js";
import { DomainError } from "../../src/domain/errors.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const appWith = (basemap?: ReturnType<typeof basemapOf>) =>
  buildApp({ store: new SqliteStore(":memory:"), networks: new NetworkRegistry(() => []), basemap });

describe("GET /config.json (web application settings)", () => {
  let plain: FastifyInstance;
  let withBasemap: FastifyInstance;
  const raster = basemapOf(
    configFromEnv({
      STREETFLOW_BASEMAP_URL: "https://tiles.example/{z}/{x}/{y}.png",
      STREETFLOW_BASEMAP_ATTRIBUTION: "© Example tiles",
    }),
  );
  before(async () => {
    [plain, withBasemap] = await Promise.all([appWith(), appWith(raster)]);
  });
  after(async () => {
    await Promise.all([plain.close(), withBasemap.close()]);
  });

  it("answers basemap null by default, without a key and uncached", async () => {
    const res = await plain.inject("/config.json");
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["cache-control"], "no-cache");
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    assert.deepEqual(res.json(), { basemap: null });
  });

  it("answers the configured raster basemap", async () => {
    assert.deepEqual((await withBasemap.inject("/config.json")).json(), {
      basemap: {
        url: "https://tiles.example/{z}/{x}/{y}.png",
        attribution: "© Example tiles",
        type: "raster",
      },
    });
  });

  it("stays out of the API document", async () => {
    const paths = Object.keys((await plain.inject("/docs/openapi.json")).json().paths);
    assert.ok(!paths.includes("/config.json"));
  });
});

describe("basemap setting (STREETFLOW_BASEMAP_URL)", () => {
  const basemap = (url?: string, attribution?: string) =>
    basemapOf(configFromEnv({ STREETFLOW_BASEMAP_URL: url, STREETFLOW_BASEMAP_ATTRIBUTION: attribution }));

  it("is none when unset or blank", () => {
    assert.equal(basemap(), null);
    assert.equal(basemap("  "), null);
  });

  it("tells a style (.json) from a tile template, also on this server's own paths", () => {
    assert.deepEqual(basemap("https://maps.example/styles/bright.json?key=abc"), {
      url: "https://maps.example/styles/bright.json?key=abc",
      attribution: null,
      type: "style",
    });
    assert.equal(basemap("/tiles/{z}/{x}/{y}.png", "Local")?.type, "raster");
    assert.equal(basemap("/tiles/{z}/{x}/{y}.png", "Local")?.attribution, "Local");
  });

  it("refuses other schemes and tile URLs without {z}, {x} and {y}, naming the variable", () => {
    for (const url of [
      "ftp://tiles.example/{z}/{x}/{y}.png",
      "tiles/{z}/{x}/{y}.png",
      "https://tiles.example/x.png",
    ]) {
      assert.throws(
        () => basemap(url),
        (err: unknown) => err instanceof DomainError && /^STREETFLOW_BASEMAP_URL /.test(err.message),
        url,
      );
    }
  });
});
