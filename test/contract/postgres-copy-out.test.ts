import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { postgresSkip, TEST_DATABASE_URL } from "../helpers/distributed.js";
import { binaryField } from "../../src/store/postgres/copy-out.js";
import { PgDb } from "../../src/store/postgres/db.js";

const ADMIN_URL = TEST_DATABASE_URL;

const skip = await postgresSkip("the COPY reader tests");

/** The trip scan reads chunks by a binary COPY (src/store/postgres/copy-out.ts), bytes as stored. */
describe("PostgreSQL binary COPY reader", { skip }, () => {
  // One connection: a failed COPY must leave it usable for the next statement.
  const pool = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
  const db = new PgDb(pool);
  after(async () => await pool.end());

  it("reads every byte value, large values, numbers, text and NULL as the server holds them", async () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const large = Buffer.alloc(3_000_000);
    for (let i = 0; i < large.length; i++) large[i] = (i * 7919) % 256;
    const [row] = await db.copyRows(
      `SELECT decode('${every.toString("hex")}', 'hex'), decode('${large.toString("hex")}', 'hex'),
              -7::int4, 9007199254740991::int8, 'Zürich ✓'::text, NULL::bytea`,
    );
    assert.deepEqual(binaryField.bytea(row[0]), every);
    const big = binaryField.bytea(row[1]);
    assert.ok(big.equals(large), "the large value arrives byte for byte");
    // Chunk columns are viewed in place: large values get an 8-byte aligned buffer of their own.
    assert.equal(big.byteOffset, 0);
    assert.equal(big.buffer.byteLength, large.length);
    assert.equal(binaryField.int4(row[2]), -7);
    assert.equal(binaryField.int8(row[3]), Number.MAX_SAFE_INTEGER);
    assert.equal(binaryField.text(row[4]), "Zürich ✓");
    assert.equal(row[5], null);
  });

  it("answers the rows in the query's order, and none for an empty result", async () => {
    const rows = await db.copyRows("SELECT n, repeat('x', n) FROM generate_series(1, 2000) n ORDER BY n");
    assert.equal(rows.length, 2000);
    rows.forEach((r, i) => {
      assert.equal(binaryField.int4(r[0]), i + 1);
      assert.equal(binaryField.text(r[1]).length, i + 1);
    });
    assert.deepEqual(await db.copyRows("SELECT 1 WHERE false"), []);
  });

  it("fails with the server's error and leaves the connection usable", async () => {
    await assert.rejects(db.copyRows("SELECT 1 / (n - 3) FROM generate_series(1, 5) n"), /division by zero/);
    assert.deepEqual(await db.rows("SELECT 2 AS two"), [{ two: 2 }]);
    const rows = await db.copyRows("SELECT 3::int4");
    assert.equal(binaryField.int4(rows[0][0]), 3);
  });

  it("runs inside a transaction on the transaction's connection", async () => {
    await db.transaction(async () => {
      await db.run("CREATE TEMP TABLE copy_probe (b bytea) ON COMMIT DROP");
      await db.run("INSERT INTO copy_probe VALUES ($1)", [Buffer.from([0, 255, 10])]);
      const rows = await db.copyRows("SELECT b FROM copy_probe");
      assert.deepEqual(binaryField.bytea(rows[0][0]), Buffer.from([0, 255, 10]));
    });
  });
});
