import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { DAY_TYPES, DIRECTIONS } from "../../src/domain/counts/metrics-request.js";
import { COUNTS_MODES } from "../../src/domain/counts/selection.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import type { SegmentStatsQuery } from "../../src/app/ports/store.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { rollupKey } from "../../src/store/sqlite/segment-rollups.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { backends } from "./backends.js";
import { randomCells } from "../helpers/random-cells.js";

const SEGMENTS = [7, 8, 12_345_678_901_234];
const MONTHS = ["2024-12", "2025-01", "2025-02"];

/** Every query the rollups answer: each counts mode × direction × source set, the whole week and day. */
function wholeWeekFilters() {
  const filters = [];
  for (const direction of DIRECTIONS)
    for (const mode of Object.values(COUNTS_MODES))
      for (const sources of [["lbs"], ["telematics"], ["lbs", "telematics"]])
        filters.push({
          daysOfWeek: DAY_TYPES.all,
          hours: Array.from({ length: 24 }, (_, h) => h),
          directions: direction === "bidirectional" ? ["with" as const, "against" as const] : [direction],
          vehicleClasses: mode.vehicleClasses,
          sources,
        });
  return filters;
}

const all = await backends();
const postgres = all.find((b) => b.name === "postgres")!;
after(async () => {
  for (const b of all) await b.dispose();
});

/** The year rollups of the PostgreSQL store (src/store/postgres/segment-rollups.ts). */
describe("PostgreSQL segment counts: whole-month rollups", { skip: postgres.skip }, () => {
  /** Each whole-week query over the months, with and without details: rollups, cells and SQLite agree. */
  async function assertRollupsExact(store: PostgresStore, reference: SqliteStore) {
    for (const f of wholeWeekFilters())
      for (const months of [MONTHS, ["2025-02"]])
        for (const details of [true, false]) {
          const q: SegmentStatsQuery = { country: "li", segmentIds: SEGMENTS, months, ...f, details };
          assert.notEqual(rollupKey(q), null);
          const rows = await store.segmentStats.query(q);
          assert.deepEqual(rows, await store.segmentStats.queryCells(q), JSON.stringify(f));
          assert.deepEqual(rows, await reference.segmentStats.query(q), JSON.stringify(f));
        }
  }

  it("answer bit for bit what summing the cells answers, and what SQLite answers", async () => {
    const store = (await postgres.open()) as PostgresStore;
    const reference = new SqliteStore(":memory:");
    const cells = randomCells(new Rng(21, "pg-rollups"), 3000, {
      segments: SEGMENTS,
      months: MONTHS,
      speeds: "arbitrary",
    });
    // Batches that come back to each segment-year: a rollup row is rewritten with its other months kept.
    for (let i = 0; i < cells.length; i += 700) {
      await store.segmentStats.add("li", cells.slice(i, i + 700));
      await reference.segmentStats.add("li", cells.slice(i, i + 700));
    }
    const q = { country: "li", segmentIds: SEGMENTS, months: MONTHS, ...wholeWeekFilters()[0] };
    assert.ok((await store.segmentStats.query(q)).length > 0);
    await assertRollupsExact(store, reference);
    await reference.close();
  });

  it("are computed again from the totals as the migration does, and stay exact under concurrent adds", async () => {
    const store = (await postgres.open()) as PostgresStore;
    const reference = new SqliteStore(":memory:");
    const cells = randomCells(new Rng(23, "pg-rollups-concurrent"), 1600, {
      segments: SEGMENTS,
      months: MONTHS,
      speeds: "arbitrary",
    });
    // One writer per month at once, each on its own connection: the same segment-years' rollup rows.
    const byMonth = MONTHS.map((m) => cells.filter((c) => c.month === m));
    await Promise.all(byMonth.map((monthCells) => store.segmentStats.add("li", monthCells)));
    for (const monthCells of byMonth) await reference.segmentStats.add("li", monthCells);
    await assertRollupsExact(store, reference);
    // As the migration: the rollups dropped and computed from the stored totals.
    await store.db.run("DELETE FROM segment_year_rollups");
    await store.segmentStats.rebuildYearRollups();
    await assertRollupsExact(store, reference);
    await reference.close();
  });

  it("kept in memory, answer what is stored after writes by this store, by another, and rolled back", async () => {
    const reader = (await postgres.open()) as PostgresStore;
    const writer = await PostgresStore.open(reader.db.pool.options.connectionString!, { pool: { max: 2 } });
    const cells = randomCells(new Rng(29, "pg-rollup-cache"), 1200, {
      segments: SEGMENTS,
      months: MONTHS,
      speeds: "arbitrary",
    });
    const f = wholeWeekFilters().find((x) => x.directions.length === 2 && x.sources.length === 2)!;
    const q = { country: "li", segmentIds: SEGMENTS, months: MONTHS, ...f, details: false };
    // Twice: the second answer comes from memory.
    const check = async (empty = false) => {
      const stored = await reader.segmentStats.queryCells(q);
      assert.equal(stored.length === 0, empty);
      assert.deepEqual(await reader.segmentStats.query(q), stored);
      assert.deepEqual(await reader.segmentStats.query(q), stored);
    };
    await check(true);
    await reader.segmentStats.add("li", cells.slice(0, 400)); // this store
    await check();
    await writer.segmentStats.add("li", cells.slice(400, 800)); // another process
    await check();
    // Read inside a transaction that then rolls back: nothing of it may stay in memory.
    await assert.rejects(
      reader.transaction(async () => {
        await reader.segmentStats.add("li", cells.slice(800));
        assert.deepEqual(await reader.segmentStats.query(q), await reader.segmentStats.queryCells(q));
        throw new Error("roll back");
      }),
      /roll back/,
    );
    await check();
    await writer.segmentStats.add("li", cells.slice(800));
    await check();
    await writer.close();
  });
});
