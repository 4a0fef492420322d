import { describe, it } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { SegmentCellAccumulator, cellsOfBatch } from "../../src/engine/counts/segment-cells.js";
import { Network } from "../../src/engine/network/network.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import { LocalClock } from "../../src/engine/time.js";
import { mergedPackedRows, SqliteSegmentStats } from "../../src/store/sqlite/counts.js";
import { migrate } from "../../src/store/sqlite/migrations.js";
import { gridNetwork } from "../helpers/counts.js";
import { randomTrips } from "../helpers/random-trips.js";

const network = new Network("li", gridNetwork());

function freshStats() {
  const db = new Database(":memory:");
  migrate(db);
  return { db, stats: new SqliteSegmentStats(db) };
}

/** Every packed row (totals, details, year rollups) in key order, each segment-period's parts merged. */
function rowsOf(db: Database.Database): unknown[] {
  return (["segment_month_totals", "segment_month_details", "segment_year_rollups"] as const).flatMap(
    (table) => [...mergedPackedRows(db, table)],
  );
}

describe("segment cell batches", () => {
  it("store the same bytes as the cells they stand for, into empty and stored segment-months", () => {
    const trips = randomTrips(network, new Rng(3, "cell-batch"), 900);
    const byCells = freshStats();
    const byBatch = freshStats();
    const clock = new LocalClock("Europe/Vaduz");
    const [a, b] = [new SegmentCellAccumulator(network, clock), new SegmentCellAccumulator(network, clock)];
    for (let at = 0; at < trips.length; at += 300) {
      for (const trip of trips.slice(at, at + 300)) {
        a.addTrip(trip);
        b.addTrip(trip);
      }
      byCells.stats.add("li", a.drain());
      byBatch.stats.addBatch("li", b.drainBatch());
    }
    const rows = rowsOf(byBatch.db);
    assert.ok(rows.length > 100, `${rows.length} rows`);
    assert.deepEqual(rows, rowsOf(byCells.db));
  });

  it("store the same bytes however the trips are batched and ordered (exact speed sums)", () => {
    // Hundreds of trips per cell, each at a speed of many binary digits: sums that rounding would change.
    const trips = randomTrips(network, new Rng(5, "cell-batch"), 900).map((trip, i) => {
      let t = Date.UTC(2025, 0, 6, 8, 0, i % 60);
      const path = trip.path.map((step, k) => {
        const seconds = (step.exitT - step.enterT) / 1000 + ((i * 7 + k) % 13) / 7;
        const moved = {
          segmentId: network.segments[k % 3].id,
          forward: true,
          enterT: t,
          exitT: t + seconds * 1000,
        };
        t += seconds * 1000;
        return moved;
      });
      return {
        ...trip,
        vehicleClass: "personal" as const,
        source: "lbs" as const,
        startT: path[0].enterT,
        endT: t,
        path,
      };
    });
    const clock = new LocalClock("Europe/Vaduz");
    const stored = (batches: (typeof trips)[]) => {
      const { db, stats } = freshStats();
      const cells = new SegmentCellAccumulator(network, clock);
      for (const batch of batches) {
        batch.forEach((trip) => cells.addTrip(trip));
        stats.addBatch("li", cells.drainBatch());
      }
      return rowsOf(db);
    };
    const whole = stored([trips]);
    assert.equal(whole.length, 3 * 3, "3 segments: totals, details and year rollups");
    const reversed = [...trips].reverse();
    assert.deepEqual(stored([reversed.slice(0, 7), reversed.slice(7, 500), reversed.slice(500)]), whole);
    assert.deepEqual(stored(trips.map((trip) => [trip])), whole);
  });

  it("store the same bytes whatever the order of a cell's counters", () => {
    const cells = new SegmentCellAccumulator(network, new LocalClock("UTC"));
    randomTrips(network, new Rng(7, "cell-batch"), 300).forEach((trip) => cells.addTrip(trip));
    const batch = cells.drainBatch();
    const byCells = freshStats();
    byCells.stats.add("li", cellsOfBatch(batch));
    // Each cell's counters reversed: descending instead of ascending.
    for (let k = 0; k + 1 < batch.detailStart.length; k++) {
      const [from, to] = [batch.detailStart[k], batch.detailStart[k + 1]];
      batch.counter.subarray(from, to).reverse();
      batch.count.subarray(from, to).reverse();
    }
    const byBatch = freshStats();
    byBatch.stats.addBatch("li", batch);
    assert.deepEqual(rowsOf(byBatch.db), rowsOf(byCells.db));
  });

  it("hold each cell once per segment-month, with the trips counted", () => {
    const trips = randomTrips(network, new Rng(4, "cell-batch"), 200);
    const cells = new SegmentCellAccumulator(network, new LocalClock("UTC"));
    trips.forEach((trip) => cells.addTrip(trip));
    const batch = cells.drainBatch();
    const keys = cellsOfBatch(batch).map(
      (c) =>
        `${c.segmentId}|${c.month}|${c.dayOfWeek}|${c.hour}|${c.direction}|${c.vehicleClass}|${c.source}`,
    );
    assert.equal(new Set(keys).size, keys.length);
    const counted = trips
      .filter((t) => !["bus", "rail"].includes(t.vehicleClass))
      .reduce((n, t) => n + new Set(t.path.map((s) => `${s.segmentId}|${s.forward}`)).size, 0);
    assert.equal(
      batch.trips.reduce((n, x) => n + x, 0),
      counted,
    );
    assert.deepEqual(cells.drainBatch().months, [], "drained");
  });

  it("refuse an income band the counters have no place for", () => {
    const [trip] = randomTrips(network, new Rng(5, "cell-batch"), 1);
    const cells = new SegmentCellAccumulator(network, new LocalClock("UTC"));
    assert.throws(() => cells.addTrip({ ...trip, vehicleClass: "personal", incomeBand: 128 }), RangeError);
  });
});
