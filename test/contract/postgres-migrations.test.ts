import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { postgresSkip, TEST_DATABASE_URL } from "../helpers/distributed.js";
import { PG_MIGRATIONS } from "../../src/store/postgres/migrations.js";
import { partitionOf } from "../../src/store/postgres/trips.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";

const ADMIN_URL = TEST_DATABASE_URL;

const skip = await postgresSkip("the migration tests");

/** Migrations on start: several processes opening one empty database at once, and opening it again. */
describe("PostgreSQL store: migrations and partitions", { skip }, () => {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  const database = `streetflow_migrate_${process.pid}_${Date.now().toString(36)}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  after(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  /**
   * A database of its own brought to the schema `version`, seeded by `seed`, then opened by the store
   * (which migrates it to the latest) for `check`; dropped afterwards.
   */
  async function fromVersion(
    suffix: string,
    version: number,
    seed: (client: pg.Client) => Promise<void>,
    check: (store: PostgresStore) => Promise<void>,
  ): Promise<void> {
    const older = `${database}_${suffix}`;
    await admin.query(`CREATE DATABASE ${older}`);
    const olderUrl = new URL(url);
    olderUrl.pathname = `/${older}`;
    const client = new pg.Client({ connectionString: olderUrl.toString() });
    await client.connect();
    try {
      await migrateTo(client, version);
      await seed(client);
    } finally {
      await client.end();
    }
    const store = await PostgresStore.open(olderUrl.toString(), { pool: { max: 2 } });
    try {
      await check(store);
    } finally {
      await store.close();
      await admin.query(`DROP DATABASE IF EXISTS ${older} WITH (FORCE)`);
    }
  }

  it("migrates once when several processes start together, and again changes nothing", async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const stores = await Promise.all(
      [1, 2, 3].map(() => PostgresStore.open(url.toString(), { pool: { max: 2 } })),
    );
    const versions = await stores[0].db.rows<{ version: number }>(
      "SELECT version FROM streetflow_migrations ORDER BY version",
    );
    assert.deepEqual(
      versions.map((v) => v.version),
      PG_MIGRATIONS.map((_, i) => i + 1),
    );
    await Promise.all(stores.map((s) => s.close()));
    const again = await PostgresStore.open(url.toString());
    assert.equal((await again.db.rows("SELECT 1 FROM streetflow_migrations")).length, PG_MIGRATIONS.length);
    await again.close();
  });

  it("keeps trips of each month in that month's partition, created by whichever writer comes first", async () => {
    const [a, b] = await Promise.all(
      [1, 2].map(() => PostgresStore.open(url.toString(), { pool: { max: 2 } })),
    );
    const trip = (deviceId: string, start: string) => ({
      deviceId,
      vehicleClass: "personal" as const,
      source: "lbs" as const,
      origin: [9.5, 47.1] as [number, number],
      destination: [9.6, 47.2] as [number, number],
      startT: Date.parse(start),
      endT: Date.parse(start) + 60_000,
      lengthM: 1000,
      path: [],
    });
    // Two writers at once on the same new months: one creates each partition, both store their trips.
    await Promise.all([
      a.trips.appendTrips("li", [trip("a", "2024-12-31T23:00:00Z"), trip("a", "2025-01-02T08:00:00Z")]),
      b.trips.appendTrips("li", [trip("b", "2025-01-03T08:00:00Z"), trip("b", "2024-12-01T08:00:00Z")]),
    ]);
    const rows = await a.db.rows<{ partition: string; n: number }>(
      "SELECT tableoid::regclass::text AS partition, COUNT(*)::int AS n FROM trip_chunks GROUP BY 1 ORDER BY 1",
    );
    assert.deepEqual(rows, [
      { partition: partitionOf("2024-12").name, n: 2 },
      { partition: partitionOf("2025-01").name, n: 2 },
    ]);
    assert.deepEqual(partitionOf("2024-12"), { name: "trip_chunks_2024_12", from: "2024-12", to: "2025-01" });
    assert.equal(await b.trips.countTrips("li"), 4);
    await Promise.all([a.close(), b.close()]);
  });

  it("converts the later pages of counts answers stored as JSON text into binary pages, readable as before", async () => {
    const page = [
      [7, "2025-01-01", 42.5, null],
      [8, "2025-01-01", -0.25, "x"],
    ];
    // The schema as it was before the binary pages (version 5), with a page of JSON text.
    await fromVersion(
      "pages",
      4,
      async (client) => {
        await client.query(
          `INSERT INTO counts_results (request_id, org_id, kind, columns, extra, page_size, total_rows, created_at, expires_at)
           VALUES ('r1', 'o1', 'metrics', '["a","b","c","d"]', '{}', 2, 4, '2026-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z')`,
        );
        await client.query("INSERT INTO counts_result_pages (request_id, page, rows) VALUES ('r1', 2, $1)", [
          JSON.stringify(page),
        ]);
      },
      async (store) => {
        assert.deepStrictEqual(await store.countsResults.page("r1", 2), page);
        const [column] = await store.db.rows<{ data_type: string }>(
          "SELECT data_type FROM information_schema.columns WHERE table_name = 'counts_result_pages' AND column_name = 'cells'",
        );
        assert.equal(column.data_type, "bytea");
      },
    );
  });

  it("compresses trip chunks with lz4 in the month partitions there before and those made after", async () => {
    const before = partitionOf("2025-01");
    // The schema before lz4 (version 6), with a month partition.
    await fromVersion(
      "lz4",
      5,
      async (client) => {
        await client.query(
          `CREATE TABLE ${before.name} PARTITION OF trip_chunks FOR VALUES FROM ('${before.from}') TO ('${before.to}')`,
        );
      },
      async (store) => {
        const later = partitionOf("2025-02");
        await store.db.run(
          `CREATE TABLE ${later.name} PARTITION OF trip_chunks FOR VALUES FROM ('${later.from}') TO ('${later.to}')`,
        );
        const rows = await store.db.rows<{ t: string; c: string }>(
          `SELECT attrelid::regclass::text AS t, attcompression AS c FROM pg_attribute
           WHERE attname = 'columns' AND attrelid IN ('trip_chunks'::regclass, $1::regclass, $2::regclass)
           ORDER BY 1`,
          [before.name, later.name],
        );
        assert.deepEqual(rows, [
          { t: "trip_chunks", c: "l" },
          { t: before.name, c: "l" },
          { t: later.name, c: "l" },
        ]);
      },
    );
  });

  it("counts the devices per month of the device-days stored before the month devices were kept", async () => {
    // The schema before trip_device_months (version 7): device a on two days of January, b in February.
    await fromVersion(
      "devices",
      6,
      async (client) => {
        await client.query(
          `INSERT INTO trip_device_days (country, day, vehicle_class, source, device_key) VALUES
           ('li', '2025-01-02', 'personal', 'lbs', '\\x0a'), ('li', '2025-01-03', 'personal', 'lbs', '\\x0a'),
           ('li', '2025-01-03', 'bicycle', 'lbs', '\\x0a'), ('li', '2025-02-01', 'personal', 'lbs', '\\x0b')`,
        );
      },
      async (store) => {
        assert.deepEqual([...(await store.tripStats.devicesByMonth("li"))].sort(), [
          ["2025-01", 1],
          ["2025-02", 1],
        ]);
      },
    );
  });
});

/** The schema of an empty database brought to `version` by the migrations up to it. */
async function migrateTo(client: pg.Client, version: number): Promise<void> {
  await client.query(
    "CREATE TABLE streetflow_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
  );
  for (let v = 0; v < version; v++) {
    const step = PG_MIGRATIONS[v];
    if (typeof step === "string") await client.query(step);
    else await step(client as unknown as pg.PoolClient);
    await client.query("INSERT INTO streetflow_migrations (version) VALUES ($1)", [v + 1]);
  }
}
