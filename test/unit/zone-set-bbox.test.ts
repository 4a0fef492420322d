import { describe, it } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { migrate, MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { ZoneFeatureCollection } from "../../src/domain/records.js";

const zones: ZoneFeatureCollection = {
  type: "FeatureCollection",
  features: [
    {
      type: "Feature",
      properties: { name: "A" },
      geometry: {
        type: "MultiPolygon",
        coordinates: [
          [
            [
              [7.41, 43.72],
              [7.42, 43.72],
              [7.42, 43.73],
              [7.41, 43.72],
            ],
          ],
        ],
      },
    },
    {
      type: "Feature",
      properties: { name: "gate" },
      geometry: {
        type: "LineString",
        coordinates: [
          [7.43, 43.74],
          [7.44, 43.75],
        ],
      },
    },
  ],
};

describe("zone-set bounding boxes", () => {
  it("are kept by the store for new sets and listed with them", async () => {
    const store = new SqliteStore(":memory:");
    const org = await store.accounts.createOrganization("Org");
    await store.zoneSets.create({
      uuid: "u1",
      orgId: org.id,
      name: "Set",
      geomType: "polygon",
      withCalibration: false,
      zoneCount: 2,
      createdAt: "2026-01-01T00:00:00Z",
      featureCollection: zones,
    });
    assert.deepEqual((await store.zoneSets.list(org.id))[0].bbox, [7.41, 43.72, 7.44, 43.75]);
    await store.close();
  });

  it("are filled in by the migration for sets stored before it", () => {
    const db = new Database(":memory:");
    const step = MIGRATIONS.findIndex((m) => typeof m === "function" && m.name === "addZoneSetBbox");
    assert.ok(step > 0);
    for (const m of MIGRATIONS.slice(0, step))
      if (typeof m === "string") db.exec(m);
      else m(db);
    db.pragma(`user_version = ${step}`);
    db.prepare("INSERT INTO organizations VALUES ('o', 'Org', 'org', '2026-01-01')").run();
    db.prepare(
      `INSERT INTO zone_sets (uuid, org_id, name, name_key, geom_type, with_calibration, zone_count, created_at, features)
       VALUES ('u1', 'o', 'Old', 'old', 'polygon', 0, 2, '2026-01-01', ?)`,
    ).run(JSON.stringify(zones));
    migrate(db);
    const row = db.prepare("SELECT bbox FROM zone_sets WHERE uuid = 'u1'").get() as { bbox: string };
    assert.deepEqual(JSON.parse(row.bbox), [7.41, 43.72, 7.44, 43.75]);
  });
});
