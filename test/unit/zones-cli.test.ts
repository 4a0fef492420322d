import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uploadZoneSets } from "../../src/app/zone-sets.js";
import { readZoneFile } from "../../src/cli/zones.js";
import { ValidationError } from "../../src/domain/errors.js";
import { storeNetworks } from "../../src/app/networks.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeOrg } from "../helpers/app.js";
import { zippedShapefile } from "../helpers/shapefile.js";

const store = new SqliteStore(":memory:");
const rt = { store, networks: storeNetworks(store.network) };
const org = await makeOrg(store, "Cli Org");
const dir = mkdtempSync(join(tmpdir(), "streetflow-zones-"));

/** Clockwise ring, as shapefiles store outer rings. */
const square = (lon: number, lat: number, d = 0.001): [number, number][] => [
  [lon, lat],
  [lon, lat + d],
  [lon + d, lat + d],
  [lon + d, lat],
  [lon, lat],
];

function writeGeoJson(name: string, zones: { name: string; lon: number; lat: number }[]): string {
  const file = join(dir, name);
  const features = zones.map((z) => ({
    type: "Feature",
    geometry: { type: "Polygon", coordinates: [square(z.lon, z.lat)] },
    properties: { name: z.name },
  }));
  writeFileSync(file, JSON.stringify({ type: "FeatureCollection", features }));
  return file;
}

const upload = async (file: string, name: string, maxZones?: number) =>
  await uploadZoneSets(rt, {
    features: await readZoneFile(file),
    name,
    org: "Cli Org",
    email: org.email,
    maxZones,
  });

describe("streetflow zones upload", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  // Three zones in Paris (geohash u09…) and two in Munich (u28…), interleaved.
  const zones = [
    { name: "m1", lon: 11.5, lat: 48.1 },
    { name: "p1", lon: 2.3, lat: 48.8 },
    { name: "m2", lon: 11.502, lat: 48.1 },
    { name: "p2", lon: 2.302, lat: 48.8 },
    { name: "p3", lon: 2.304, lat: 48.8 },
  ];

  it("stores a file that fits as one set", async () => {
    const sets = await upload(writeGeoJson("small.geojson", zones), "Whole");
    assert.deepEqual(
      sets.map((s) => [s.name, s.zoneCount]),
      [["Whole", 5]],
    );
    assert.equal(
      (await store.zoneSets.get(org.orgId, "whole"))?.featureCollection.features[1].properties.name,
      "p1",
    );
  });

  it("splits a large file into geohash-grouped sets NAME_1, NAME_2", async () => {
    const sets = await upload(writeGeoJson("big.json", zones), "City", 3);
    assert.deepEqual(
      sets.map((s) => [s.name, s.zoneCount]),
      [
        ["City_1", 3],
        ["City_2", 2],
      ],
    );
    const names = async (setName: string) =>
      (await store.zoneSets.get(org.orgId, setName))!.featureCollection.features
        .map((f) => f.properties.name)
        .sort();
    assert.deepEqual(await names("City_1"), ["p1", "p2", "p3"]);
    assert.deepEqual(await names("City_2"), ["m1", "m2"]);
  });

  it("creates nothing when one of the parts' names is taken", async () => {
    await store.zoneSets.create({
      ...(await store.zoneSets.get(org.orgId, "Whole"))!,
      uuid: crypto.randomUUID(),
      name: "Taken_2",
    });
    const before = (await store.zoneSets.list(org.orgId)).length;
    await assert.rejects(upload(writeGeoJson("again.geojson", zones), "Taken", 3), /already exists/);
    assert.equal((await store.zoneSets.list(org.orgId)).length, before);
  });

  it("validates the file like the API", async () => {
    const file = writeGeoJson("dup.geojson", [zones[0], { ...zones[1], name: "M1" }]);
    await assert.rejects(upload(file, "Dup"), (e: unknown) => {
      assert.ok(e instanceof ValidationError);
      assert.deepEqual(
        e.issues.map((i) => i.field),
        ["zones[1].properties.name"],
      );
      return true;
    });
  });

  it("reads a zipped shapefile", async () => {
    const file = join(dir, "zones.zip");
    writeFileSync(
      file,
      zippedShapefile([
        { ring: square(11.5, 48.1), attributes: { name: "North", id: 7 } },
        { ring: square(11.6, 48.2), attributes: { name: "South", id: 8 } },
      ]),
    );
    const [set] = await upload(file, "From shapefile");
    const stored = (await store.zoneSets.get(org.orgId, set.uuid))!;
    assert.equal(stored.geomType, "polygon");
    assert.deepEqual(
      stored.featureCollection.features.map((f) => [f.properties.name, f.properties.id, f.geometry.type]),
      [
        ["North", 7, "MultiPolygon"],
        ["South", 8, "MultiPolygon"],
      ],
    );
    assert.deepEqual(stored.featureCollection.features[0].geometry.coordinates, [[square(11.5, 48.1)]]);
  });
});
