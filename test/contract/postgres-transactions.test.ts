import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { postgresSkip, TEST_DATABASE_URL } from "../helpers/distributed.js";
import { PgDb } from "../../src/store/postgres/db.js";

const skip = await postgresSkip("the PostgreSQL transaction tests");

/** PgDb carries a transaction's connection in its async context (src/store/postgres/db.ts). */
describe("PostgreSQL transactions", { skip }, () => {
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
  const db = new PgDb(pool);
  const table = `sf_tx_test_${process.pid}`;
  after(async () => {
    await db.run(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });
  const pid = async () => (await db.row<{ pid: number }>("SELECT pg_backend_pid() AS pid"))!.pid;

  it("keeps a transaction on its own connection when another one ends meanwhile, and again in later ones", async () => {
    await db.run(`CREATE TABLE ${table} (v int)`);
    for (let round = 0; round < 2; round++) {
      let firstEnded!: () => void;
      const ended = new Promise<void>((resolve) => (firstEnded = resolve));
      const second = db.transaction(async () => {
        const before = await pid();
        await db.run(`INSERT INTO ${table} VALUES (2)`);
        await ended;
        // The first transaction has committed and released its connection: this one still runs on its own.
        assert.equal(db.inTransaction, true);
        assert.equal(await pid(), before);
        await db.run(`INSERT INTO ${table} VALUES (3)`);
        throw new Error("rolled back");
      });
      await db.transaction(async () => await db.run(`INSERT INTO ${table} VALUES (1)`));
      firstEnded();
      await assert.rejects(second, /rolled back/);
      assert.equal(db.inTransaction, false);
    }
    const rows = await db.rows<{ v: number }>(`SELECT v FROM ${table} ORDER BY v`);
    assert.deepEqual(
      rows.map((r) => r.v),
      [1, 1],
    );
  });
});
