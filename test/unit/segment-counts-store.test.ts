import { describe, it } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DAY_PARTS, DAY_TYPES, DIRECTIONS } from "../../src/domain/counts/metrics-request.js";
import { COUNTS_MODES } from "../../src/domain/counts/selection.js";
import { SegmentCellAccumulator } from "../../src/engine/counts/segment-cells.js";
import { Network } from "../../src/engine/network/network.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import { LocalClock } from "../../src/engine/time.js";
import { type MatchedTrip } from "../../src/engine/trips/types.js";
import { mergedPackedRows, SqliteSegmentStats } from "../../src/store/sqlite/counts.js";
import { migrate, MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { rollupKey } from "../../src/store/sqlite/segment-rollups.js";
import {
  emptySegmentMonth,
  SPEED_BINS,
  type SegmentMonthStats,
  type SegmentStatCell,
} from "../../src/engine/counts/segment-stats.js";
import { type SegmentStatsQuery } from "../../src/app/ports/store.js";
import { gridNetwork, rowSeg } from "../helpers/counts.js";
import { randomCells as randomCellsOver } from "../helpers/random-cells.js";

const SEGMENTS = [rowSeg(0, 0), rowSeg(0, 1), 1_234_567_890 * 10_000 + 3];
const MONTHS = ["2025-01", "2025-02"];

type Filters = Omit<SegmentStatsQuery, "country" | "segmentIds" | "months">;

/** Every filter combination a metrics request can ask for (day type × day part × direction × mode × source). */
function everyFilter(): Filters[] {
  const out: Filters[] = [];
  for (const daysOfWeek of Object.values(DAY_TYPES))
    for (const part of DAY_PARTS)
      for (const direction of DIRECTIONS)
        for (const mode of Object.values(COUNTS_MODES))
          for (const sources of [["lbs"], ["telematics"], ["lbs", "telematics"]])
            out.push({
              daysOfWeek,
              hours: Array.from({ length: part.endHour - part.startHour + 1 }, (_, i) => part.startHour + i),
              directions: direction === "bidirectional" ? ["with", "against"] : [direction],
              vehicleClasses: mode.vehicleClasses,
              sources,
            });
  return out;
}

/** Random cells over three segments and two months, every detail random (test/helpers/random-cells.ts). */
const randomCells = (rng: Rng, n: number, exactSpeeds: boolean): SegmentStatCell[] =>
  randomCellsOver(rng, n, {
    segments: SEGMENTS,
    months: MONTHS,
    speeds: exactSpeeds ? "exact" : "arbitrary",
    detailed: true,
  });

const addTo = (into: Record<string, number>, more: Record<string, number>) => {
  for (const [k, v] of Object.entries(more)) into[k] = (into[k] ?? 0) + v;
};

/** An empty sum with the histogram SPEED_BINS long, as queries with details give it. */
const emptySum = (segmentId: number, month: string): SegmentMonthStats => ({
  ...emptySegmentMonth(segmentId, month),
  speedHistogram: new Array(SPEED_BINS).fill(0),
});

type Counts = Omit<SegmentMonthStats, "segmentId" | "month">;

function addCounts(into: Counts, c: Counts): void {
  into.trips += c.trips;
  into.speedSumKph += c.speedSumKph;
  into.speedCount += c.speedCount;
  c.speedHistogram.forEach((n, bin) => (into.speedHistogram[bin] = (into.speedHistogram[bin] ?? 0) + n));
  addTo(into.purposes, c.purposes);
  addTo(into.incomes, c.incomes);
}

/** The sums a query must give, folded from the cells themselves. */
function expected(cells: SegmentStatCell[], months: string[], f: Filters): SegmentMonthStats[] {
  const sums = new Map<string, SegmentMonthStats>();
  for (const c of cells) {
    const selected =
      months.includes(c.month) &&
      f.daysOfWeek.includes(c.dayOfWeek) &&
      f.hours.includes(c.hour) &&
      f.directions.includes(c.direction) &&
      f.vehicleClasses.includes(c.vehicleClass) &&
      f.sources.includes(c.source);
    if (!selected) continue;
    const key = `${c.segmentId}|${c.month}`;
    let s = sums.get(key);
    if (!s) sums.set(key, (s = emptySum(c.segmentId, c.month)));
    addCounts(s, c);
  }
  return [...sums.values()]
    .filter((s) => s.trips > 0)
    .sort((a, b) => a.segmentId - b.segmentId || a.month.localeCompare(b.month));
}

/** What a query without details gives. */
const totalsOnly = (s: SegmentMonthStats) => ({ ...s, speedHistogram: [], purposes: {}, incomes: {} });

const query = (stats: SqliteSegmentStats, months: string[], f: Filters, details = true) =>
  stats.query({ country: "li", segmentIds: SEGMENTS, months, ...f, details });

function freshStats(): SqliteSegmentStats {
  const db = new Database(":memory:");
  migrate(db);
  return new SqliteSegmentStats(db);
}

describe("segment counts store: one packed row per segment × month", () => {
  const rng = new Rng(7, "segment-counts");
  const cells = randomCells(rng, 1500, true);

  it("sums the same as the cells themselves for every filter combination", () => {
    const stats = freshStats();
    // Several batches, so months are updated in place as ingest does.
    for (let i = 0; i < cells.length; i += 400) stats.add("li", cells.slice(i, i + 400));
    stats.add("zz", randomCells(rng, 100, true)); // another country never leaks in
    for (const f of everyFilter()) {
      const label = JSON.stringify(f);
      assert.deepEqual(query(stats, MONTHS, f), expected(cells, MONTHS, f), label);
      const totals = query(stats, ["2025-02"], f, false);
      assert.deepEqual(totals, expected(cells, ["2025-02"], f).map(totalsOnly), label);
    }
  });

  it("adding to a stored month gives what adding everything at once gives", () => {
    const once = freshStats();
    once.add("li", cells);
    const inSteps = freshStats();
    for (let i = 0; i < cells.length; i += 25) inSteps.add("li", cells.slice(i, i + 25));
    for (const f of everyFilter().filter((_, i) => i % 17 === 0))
      assert.deepEqual(query(inSteps, MONTHS, f), query(once, MONTHS, f));
  });

  it("refuses cells the layout has no place for", () => {
    const stats = freshStats();
    const [cell] = randomCells(rng, 1, true);
    assert.throws(() => stats.add("li", [{ ...cell, vehicleClass: "plane" }]), RangeError);
    assert.throws(() => stats.add("li", [{ ...cell, vehicleClass: "bus" }]), RangeError);
    assert.throws(() => stats.add("li", [{ ...cell, hour: 24 }]), RangeError);
    assert.throws(() => stats.add("li", [{ ...cell, purposes: { shopping: 1 } }]), RangeError);
    assert.throws(() => stats.add("li", [{ ...cell, incomes: { "300": 1 } }]), RangeError);
    assert.deepEqual(query(stats, MONTHS, everyFilter()[0]), []);
  });

  it("ingesting more trips into a month already stored updates that month", () => {
    const network = new Network("li", gridNetwork());
    const segment = network.segmentById(rowSeg(0, 0))!;
    const stats = freshStats();
    const cellsOf = new SegmentCellAccumulator(network, new LocalClock("UTC"));
    // Monday 6 January 2025 08:00 UTC; 100 m in 9 s = 40 km/h.
    const trip = (
      minute: number,
      vehicleClass: MatchedTrip["vehicleClass"],
      incomeBand: number | null = 2,
    ): MatchedTrip => {
      const t = Date.UTC(2025, 0, 6, 8, minute);
      return {
        deviceId: `d${minute}`,
        vehicleClass,
        source: "lbs",
        origin: segment.coords[0],
        destination: segment.coords[1],
        startT: t,
        endT: t + 9_000,
        lengthM: segment.lengthM,
        path: [{ segmentId: segment.id, forward: true, enterT: t, exitT: t + 9_000 }],
        purpose: "hbw",
        incomeBand: incomeBand ?? undefined,
      };
    };
    const ingest = (trips: MatchedTrip[]) => {
      trips.forEach((t) => cellsOf.addTrip(t));
      stats.add("li", cellsOf.drain());
    };
    const mondayPeakAm: Filters = {
      daysOfWeek: DAY_TYPES.monday,
      hours: [6, 7, 8, 9],
      directions: ["with"],
      vehicleClasses: COUNTS_MODES.vehicle.vehicleClasses,
      sources: ["lbs"],
    };
    const kph = segment.lengthM / 1000 / (9 / 3600);
    ingest([trip(0, "personal"), trip(5, "personal")]);
    let [s] = query(stats, ["2025-01"], mondayPeakAm);
    assert.equal(s.trips, 2);
    ingest([trip(10, "personal"), trip(20, "heavy_commercial")]);
    [s] = query(stats, ["2025-01"], mondayPeakAm);
    assert.equal(s.trips, 4);
    assert.equal(s.speedCount, 4);
    assert.ok(Math.abs(s.speedSumKph - 4 * kph) < 1e-9);
    assert.deepEqual(s.purposes, { hbw: 4 });
    assert.deepEqual(s.incomes, { "2": 4 });
    const [trucks] = query(stats, ["2025-01"], { ...mondayPeakAm, vehicleClasses: ["heavy_commercial"] });
    assert.equal(trucks.trips, 1);
    // Band 0 counts like any band; a trip without a band counts as a trip but in no band.
    ingest([trip(30, "personal", 0), trip(31, "personal", null)]);
    [s] = query(stats, ["2025-01"], mondayPeakAm);
    assert.equal(s.trips, 6);
    assert.deepEqual(s.incomes, { "0": 1, "2": 4 });
    // Bus and rail riders are zone-analysis modes: the segment tallies leave them out.
    ingest([trip(40, "bus"), trip(41, "rail")]);
    [s] = query(stats, ["2025-01"], mondayPeakAm);
    assert.equal(s.trips, 6);
  });
});

describe("segment-months in parts", () => {
  /** Each segment-month's levels, as "segment|month" → levels ascending. */
  function levelsOf(stats: SqliteSegmentStats): Map<string, number[]> {
    const db = (stats as unknown as { db: Database.Database }).db;
    const rows = db
      .prepare("SELECT segment_id, month, level FROM segment_month_totals ORDER BY 1, 2, 3")
      .raw()
      .all() as [number, string, number][];
    const levels = new Map<string, number[]>();
    for (const [segmentId, month, level] of rows) {
      const key = `${segmentId}|${month}`;
      levels.set(key, [...(levels.get(key) ?? []), level]);
    }
    return levels;
  }

  const bitsOf = (n: number) => [...Array(31).keys()].filter((bit) => (n >> bit) & 1);

  it("keep a part per set bit of the month's batch count when every batch adds to every segment-month", () => {
    const cells = randomCells(new Rng(31, "parts"), 2600, true);
    const stats = freshStats();
    for (let n = 1; n <= 13; n++) {
      const batch = cells.slice((n - 1) * 200, n * 200);
      assert.equal(
        new Set(batch.map((c) => `${c.segmentId}|${c.month}`)).size,
        SEGMENTS.length * MONTHS.length,
      );
      stats.add("li", batch);
      const levels = levelsOf(stats);
      assert.equal(levels.size, SEGMENTS.length * MONTHS.length);
      for (const [key, found] of levels) assert.deepEqual(found, bitsOf(n), `${key} after batch ${n}`);
    }
    // 13 batches in 3 parts, answering what the cells add up to, from the rollups and from the cells.
    for (const f of everyFilter().filter((_, i) => i % 5 === 0)) {
      assert.deepEqual(query(stats, MONTHS, f), expected(cells, MONTHS, f), JSON.stringify(f));
      const q = { country: "li", segmentIds: SEGMENTS, months: MONTHS, ...f };
      assert.deepEqual(stats.queryCells(q), stats.query(q));
    }
  });

  it("keep every segment-month's data when batches leave it out, in at most log2(n) + 1 parts", () => {
    // Batches of 3 cells: most segment-months are left out of most batches.
    const cells = randomCells(new Rng(37, "parts-sparse"), 600, true);
    const stats = freshStats();
    for (let i = 0; i < cells.length; i += 3) stats.add("li", cells.slice(i, i + 3));
    const batches = cells.length / 3;
    for (const found of levelsOf(stats).values())
      assert.ok(found.length <= Math.floor(Math.log2(batches)) + 1, `${found.length} parts`);
    assert.ok([...levelsOf(stats).values()].some((found) => found.length > 1));
    for (const f of everyFilter().filter((_, i) => i % 5 === 0))
      assert.deepEqual(query(stats, MONTHS, f), expected(cells, MONTHS, f), JSON.stringify(f));
  });

  it("are compacted, in the months before it, by the first batch into a month", () => {
    const cells = randomCells(new Rng(43, "parts-compaction"), 2000, true);
    const [january, february] = MONTHS.map((m) => cells.filter((c) => c.month === m));
    const stats = freshStats();
    for (let i = 0; i < 7; i++) stats.add("li", january.slice(i * 100, (i + 1) * 100));
    const partsOf = (month: string) =>
      [...levelsOf(stats)].filter(([key]) => key.endsWith(month)).map(([, found]) => found);
    const levels = (...found: number[]) => SEGMENTS.map(() => found);
    const db = (stats as unknown as { db: Database.Database }).db;
    const rollupParts = () =>
      (
        db
          .prepare(
            `SELECT segment_id, group_concat(level) FROM
               (SELECT segment_id, level FROM segment_year_rollups ORDER BY 1, 2) GROUP BY segment_id ORDER BY 1`,
          )
          .raw()
          .all() as [number, string][]
      ).map(([, found]) => found);
    const totalsWithRollups = (month: string) =>
      db
        .prepare("SELECT level FROM segment_month_totals WHERE month = ? AND rollup IS NOT NULL ORDER BY 1")
        .pluck()
        .all(month);
    assert.deepEqual(partsOf(MONTHS[0]), levels(0, 1, 2));
    // January's rollup entries are in its totals' parts, none in the year's rollups yet.
    assert.deepEqual(rollupParts(), []);
    assert.deepEqual(totalsWithRollups(MONTHS[0]), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    stats.add("li", february.slice(0, 100));
    assert.deepEqual(partsOf(MONTHS[0]), levels(31));
    // Compaction moved them into the year's rollups; February's first part holds its own.
    assert.deepEqual(rollupParts(), ["31", "31", "31"]);
    assert.deepEqual(totalsWithRollups(MONTHS[0]), []);
    assert.deepEqual(totalsWithRollups(MONTHS[1]), [0, 0, 0]);
    const sent = [...january.slice(0, 700), ...february.slice(0, 100)];
    for (const f of everyFilter().filter((_, i) => i % 5 === 0))
      assert.deepEqual(query(stats, MONTHS, f), expected(sent, MONTHS, f), JSON.stringify(f));
    // Late batches into January go on counting (the 8th writes level 3, the 9th level 0), never merging the
    // compacted row.
    stats.add("li", january.slice(700, 800));
    assert.deepEqual(partsOf(MONTHS[0]), levels(3, 31));
    assert.deepEqual(totalsWithRollups(MONTHS[0]), [3, 3, 3]);
    stats.add("li", january.slice(800));
    stats.add("li", february.slice(100));
    assert.deepEqual(partsOf(MONTHS[0]), levels(0, 3, 31));
    for (const f of everyFilter().filter((_, i) => i % 5 === 0))
      assert.deepEqual(query(stats, MONTHS, f), expected(cells, MONTHS, f), JSON.stringify(f));
  });

  it("are compacted before the month before the newest when a run ends, though no batch was the first into a later month", () => {
    const months = ["2025-01", "2025-02", "2025-03"];
    const cells = randomCellsOver(new Rng(61, "parts-run-end"), 1800, {
      segments: SEGMENTS,
      months,
      speeds: "exact",
      detailed: true,
    });
    const stats = freshStats();
    // Every batch adds to every month, as a year back-filled from one file does.
    for (let i = 0; i < 1800; i += 600) stats.add("li", cells.slice(i, i + 600));
    const db = (stats as unknown as { db: Database.Database }).db;
    const openRollups = (month: string) =>
      db
        .prepare("SELECT count(*) FROM segment_month_totals WHERE month = ? AND rollup IS NOT NULL")
        .pluck()
        .get(month);
    const filters = everyFilter().filter((_, i) => i % 5 === 0);
    const before = filters.map((f) => query(stats, months, f));
    assert.deepEqual(levelsOf(stats).get(`${SEGMENTS[0]}|${months[0]}`), [0, 1]);
    assert.equal(db.prepare("SELECT count(*) FROM segment_year_rollups").pluck().get(), 0);
    stats.compact("li");
    for (const segmentId of SEGMENTS) {
      assert.deepEqual(levelsOf(stats).get(`${segmentId}|${months[0]}`), [31]);
      for (const open of months.slice(1))
        assert.deepEqual(levelsOf(stats).get(`${segmentId}|${open}`), [0, 1]);
    }
    assert.equal(openRollups(months[0]), 0);
    for (const open of months.slice(1)) assert.equal(openRollups(open), 2 * SEGMENTS.length);
    assert.deepEqual(
      filters.map((f) => query(stats, months, f)),
      before,
    );
    for (const f of filters)
      assert.deepEqual(query(stats, months, f), expected(cells, months, f), JSON.stringify(f));
  });

  it("are compacted whole when a month holds more segment-months than one upsert writes", () => {
    const segments = Array.from({ length: 600 }, (_, i) => i + 1);
    const over = { segments, speeds: "exact" as const, detailed: true };
    const january = randomCellsOver(new Rng(47, "parts-compaction-many"), 6000, {
      ...over,
      months: [MONTHS[0]],
    });
    const february = randomCellsOver(new Rng(53, "parts-compaction-many"), 10, {
      ...over,
      months: [MONTHS[1]],
    });
    const stats = freshStats();
    for (let i = 0; i < january.length; i += 2000) stats.add("li", january.slice(i, i + 2000));
    stats.add("li", february);
    assert.ok([...levelsOf(stats).values()].every((found) => found.length === 1));
    const f = everyFilter()[0];
    const q = { country: "li", segmentIds: segments, months: MONTHS, ...f };
    assert.deepEqual(stats.query(q), expected([...january, ...february], MONTHS, f));
  });

  it("start from the rows stored before them, at level 0", () => {
    const cells = randomCells(new Rng(41, "parts-migration"), 900, true);
    const current = freshStats();
    current.add("li", cells.slice(0, 600));
    // A database from before parts (two migrations back), holding what the current store holds in that layout.
    const db = databaseAt(MIGRATIONS.length - 2);
    const currentDb = (current as unknown as { db: Database.Database }).db;
    for (const table of ["segment_month_totals", "segment_month_details"] as const) {
      const put = db.prepare(`INSERT INTO ${table} (country, segment_id, month, cells) VALUES (?, ?, ?, ?)`);
      for (const row of mergedPackedRows(currentDb, table)) put.run(...row);
    }
    const putRollup = db.prepare("INSERT INTO segment_year_rollups VALUES (?, ?, ?, ?)");
    for (const row of mergedPackedRows(currentDb, "segment_year_rollups")) putRollup.run(...row);
    migrate(db);
    const former = new SqliteSegmentStats(db);
    assert.ok([...levelsOf(former).values()].every((found) => found.join() === "0"));
    for (const stats of [former, current]) stats.add("li", cells.slice(600));
    for (const f of everyFilter().filter((_, i) => i % 5 === 0)) {
      assert.deepEqual(query(former, MONTHS, f), expected(cells, MONTHS, f), JSON.stringify(f));
      assert.deepEqual(query(former, MONTHS, f), query(current, MONTHS, f), JSON.stringify(f));
    }
  });

  it("start from parts whose rollup entries are in the year's rollups, as stored before the totals held them", () => {
    const cells = randomCells(new Rng(59, "parts-rollup-migration"), 900, true);
    const january = cells.filter((c) => c.month === MONTHS[0]);
    const current = freshStats();
    for (let i = 0; i < 300; i += 100) current.add("li", january.slice(i, i + 100));
    // One migration back: January's parts as they are, their rollup entries in the year's rollups, January open.
    const db = databaseAt(MIGRATIONS.length - 1);
    const currentDb = (current as unknown as { db: Database.Database }).db;
    for (const table of ["segment_month_totals", "segment_month_details"]) {
      const put = db.prepare(
        `INSERT INTO ${table} (country, segment_id, month, level, cells) VALUES (?, ?, ?, ?, ?)`,
      );
      for (const row of currentDb
        .prepare(`SELECT country, segment_id, month, level, cells FROM ${table}`)
        .raw()
        .all() as unknown[][])
        put.run(...row);
    }
    const putRollup = db.prepare("INSERT INTO segment_year_rollups VALUES (?, ?, ?, 0, ?)");
    for (const row of mergedPackedRows(currentDb, "segment_year_rollups")) putRollup.run(...row);
    db.prepare("INSERT INTO segment_month_batches VALUES ('li', ?, 3, 0)").run(MONTHS[0]);
    migrate(db);
    const former = new SqliteSegmentStats(db);
    assert.equal(
      db.prepare("SELECT count(*) FROM segment_month_totals WHERE rollup IS NOT NULL").pluck().get(),
      0,
    );
    // January's 4th batch merges the parts of levels 0 and 1 into level 2, then February's first compacts it.
    const rest = cells.filter((c) => !january.slice(0, 300).includes(c));
    for (const stats of [former, current]) {
      stats.add("li", january.slice(300, 400));
      stats.add(
        "li",
        rest.filter((c) => !january.includes(c)),
      );
      stats.add("li", january.slice(400));
    }
    for (const f of everyFilter().filter((_, i) => i % 5 === 0)) {
      assert.deepEqual(query(former, MONTHS, f), expected(cells, MONTHS, f), JSON.stringify(f));
      assert.deepEqual(query(former, MONTHS, f), query(current, MONTHS, f), JSON.stringify(f));
    }
  });
});

/** A new database migrated to `version` and no further. */
function databaseAt(version: number): Database.Database {
  const db = new Database(":memory:");
  for (const m of MIGRATIONS.slice(0, version)) {
    if (typeof m === "string") db.exec(m);
    else m(db);
  }
  db.pragma(`user_version = ${version}`);
  return db;
}

/** Two connections to one new SQLite file in WAL mode, as two processes (or a process and its threads) hold. */
function twoConnections(prefix: string) {
  const file = join(mkdtempSync(join(tmpdir(), prefix)), "counts.sqlite");
  const open = () => {
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    migrate(db);
    return { db, stats: new SqliteSegmentStats(db) };
  };
  return [open(), open()] as const;
}

describe("whole-month rollups", () => {
  // Arbitrary speeds (every mantissa bit in use) are kept in whole steps of 1/1024 km/h, as ingests tally them:
  // unrounded, a segment-month's parts and its rollups would add up in different orders and differ in the
  // last bits. Sums in such steps are summed per slot first (addTotalsBySlot).
  for (const exactSpeeds of [false, true])
    it(`answer bit for bit what summing the cells answers, for every filter combination (${exactSpeeds ? "exact" : "arbitrary"} speeds)`, () => {
      const rng = new Rng(13, "rollups");
      // Rollups are kept per year: months of two years, in batches that come back to a year.
      const cells = randomCells(rng, 3000, exactSpeeds).map((c, i) =>
        i % 3 === 0 ? { ...c, month: "2024-12" } : c,
      );
      const stats = freshStats();
      for (let i = 0; i < cells.length; i += 700) stats.add("li", cells.slice(i, i + 700));
      // The filters answered from rollups (day type and day part "all"); the rest sum cells either way.
      const whole = everyFilter().filter((f) => rollupKey(f) !== null);
      for (const f of whole)
        for (const months of [["2024-12", ...MONTHS], ["2025-02"]])
          for (const details of [true, false]) {
            const q = { country: "li", segmentIds: SEGMENTS, months, ...f, details };
            const rows = stats.query(q);
            assert.ok(rows.length > 0);
            assert.ok(rows.every((r) => Number.isInteger(r.speedSumKph * 1024)));
            assert.deepEqual(rows, stats.queryCells(q), JSON.stringify(f));
          }
      // Each mode × direction × source.
      assert.equal(whole.length, Object.keys(COUNTS_MODES).length * DIRECTIONS.length * 3);
    });

  it("kept in memory, answer what is stored after writes on this connection, on another, and rolled back", () => {
    const rng = new Rng(17, "rollup-cache");
    const cells = randomCells(rng, 1200, false);
    const [reader, writer] = twoConnections("rollup-cache-");
    const f = everyFilter().find((x) => rollupKey(x) !== null)!;
    const q = { country: "li", segmentIds: SEGMENTS, months: MONTHS, ...f, details: false };
    // The cells as stored (the compensated speed sums) and the trips the added cells hold.
    const stored = () => reader.stats.queryCells(q);
    const trips = (upTo: number) => expected(cells.slice(0, upTo), MONTHS, f).map((s) => s.trips);
    const check = (upTo: number) => {
      const rows = reader.stats.query(q);
      assert.deepEqual(rows, stored());
      assert.deepEqual(
        rows.map((s) => s.trips),
        trips(upTo),
      );
      assert.deepEqual(reader.stats.query(q), rows); // from memory the second time
    };
    check(0);
    reader.stats.add("li", cells.slice(0, 400)); // this connection
    check(400);
    writer.stats.add("li", cells.slice(400, 800)); // another connection (an ingest worker)
    check(800);
    // Read inside a transaction that then rolls back: nothing of it may stay in memory.
    reader.db.exec("BEGIN");
    reader.stats.add("li", cells.slice(800));
    assert.deepEqual(reader.stats.query(q), stored());
    reader.db.exec("ROLLBACK");
    check(800);
    writer.stats.add("li", cells.slice(800));
    check(cells.length);
    reader.db.close();
    writer.db.close();
  });

  it("kept in memory, survive other connections' commits that write no tallies (API calls, metering)", () => {
    const [reader, other] = twoConnections("rollup-cache-kept-");
    reader.stats.add("li", randomCells(new Rng(19, "rollup-cache-kept"), 400, false));
    const f = everyFilter().find((x) => rollupKey(x) !== null)!;
    const q = { country: "li", segmentIds: SEGMENTS, months: MONTHS, ...f, details: false };
    const answer = reader.stats.query(q);
    assert.ok(answer.length > 0);
    // Probe: the rows removed behind the version's back. An answer from memory still has them; one read
    // again would not. Another process's API calls commit all the time without touching the tallies.
    other.db.exec("DELETE FROM segment_year_rollups; UPDATE segment_month_totals SET rollup = NULL");
    other.db.exec("CREATE TABLE elsewhere (x); INSERT INTO elsewhere VALUES (1)");
    assert.deepEqual(reader.stats.query(q), answer, "the other connection's commits kept the cache");
    // A write of tallies on the other connection bumps the version: the rollups are read again (none now).
    other.stats.add(
      "li",
      randomCells(new Rng(23, "rollup-cache-kept"), 10, false).map((c) => ({ ...c, month: "2024-06" })),
    );
    assert.notDeepEqual(reader.stats.query(q), answer);
    reader.db.close();
    other.db.close();
  });

  it("cover every counts mode's classes for the whole week, and nothing narrower in time", () => {
    const whole = { daysOfWeek: DAY_TYPES.all, hours: [...Array(24).keys()], directions: ["with" as const] };
    for (const mode of Object.values(COUNTS_MODES))
      assert.notEqual(rollupKey({ ...whole, vehicleClasses: mode.vehicleClasses, sources: ["lbs"] }), null);
    const vehicle = { ...whole, vehicleClasses: COUNTS_MODES.vehicle.vehicleClasses, sources: ["lbs"] };
    assert.equal(rollupKey({ ...vehicle, daysOfWeek: DAY_TYPES.weekday }), null);
    assert.equal(rollupKey({ ...vehicle, hours: [0, 1, 2] }), null);
    assert.equal(rollupKey({ ...vehicle, vehicleClasses: ["personal", "bicycle"] }), null);
  });
});

describe("migration to packed segment-months", () => {
  /** A database as it was before the migration, with per-cell rows written as the former store wrote them. */
  function formerDatabase(cells: SegmentStatCell[]): Database.Database {
    const db = new Database(":memory:");
    const before = MIGRATIONS.findIndex((m) => typeof m !== "string");
    for (const m of MIGRATIONS.slice(0, before)) db.exec(m as string);
    db.pragma(`user_version = ${before}`);
    const merged = new Map<string, SegmentStatCell>();
    for (const c of cells) {
      const key = [c.segmentId, c.month, c.dayOfWeek, c.hour, c.direction, c.vehicleClass, c.source].join(
        "|",
      );
      let m = merged.get(key);
      if (!m) merged.set(key, (m = { ...c, ...emptySegmentMonth(c.segmentId, c.month) }));
      addCounts(m, c);
    }
    const put = db.prepare("INSERT INTO segment_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const c of merged.values())
      put.run(
        "li",
        c.segmentId,
        c.month,
        c.dayOfWeek,
        c.hour,
        c.direction,
        c.vehicleClass,
        c.source,
        c.trips,
        c.speedSumKph,
        c.speedCount,
        JSON.stringify(Array.from({ length: SPEED_BINS }, (_, i) => c.speedHistogram[i] ?? 0)),
        JSON.stringify(c.purposes),
        JSON.stringify(c.incomes),
      );
    return db;
  }

  /** Totals as the former store's SQL summed them (SUM over the matching cells), details folded in JS. */
  function formerQuery(db: Database.Database, f: Filters): SegmentMonthStats[] {
    const lists = [f.daysOfWeek, f.hours, f.directions, f.vehicleClasses, f.sources];
    const [days, hours, directions, classes, sources] = lists.map((l) => l.map(() => "?").join(","));
    const where = `country = 'li' AND day_of_week IN (${days}) AND hour IN (${hours})
      AND direction IN (${directions}) AND vehicle_class IN (${classes}) AND source IN (${sources})`;
    const params = lists.flat();
    const totals = db
      .prepare(
        `SELECT segment_id, month, SUM(trips) AS trips, SUM(speed_sum_kph) AS speed, SUM(speed_count) AS count
         FROM segment_stats WHERE ${where} GROUP BY segment_id, month ORDER BY segment_id, month`,
      )
      .all(...params) as { segment_id: number; month: string; trips: number; speed: number; count: number }[];
    const details = db
      .prepare(
        `SELECT segment_id, month, speed_histogram, purposes, incomes FROM segment_stats WHERE ${where}`,
      )
      .all(...params) as {
      segment_id: number;
      month: string;
      speed_histogram: string;
      purposes: string;
      incomes: string;
    }[];
    const detailsOf = new Map<string, typeof details>();
    for (const d of details) {
      const key = `${d.segment_id}|${d.month}`;
      detailsOf.set(key, [...(detailsOf.get(key) ?? []), d]);
    }
    return totals
      .filter((t) => t.trips > 0)
      .map((t) => {
        const s = {
          ...emptySum(t.segment_id, t.month),
          trips: t.trips,
          speedSumKph: t.speed,
          speedCount: t.count,
        };
        for (const d of detailsOf.get(`${t.segment_id}|${t.month}`) ?? [])
          addCounts(s, {
            ...emptySegmentMonth(t.segment_id, t.month),
            speedHistogram: JSON.parse(d.speed_histogram),
            purposes: JSON.parse(d.purposes),
            incomes: JSON.parse(d.incomes),
          });
        return s;
      });
  }

  it("carries every cell over: queries answer bit for bit what the per-cell table answered", () => {
    // Arbitrary speeds: the packed sums must add up in the same order as SQLite's SUM did.
    const db = formerDatabase(randomCells(new Rng(11, "migration"), 1000, false));
    const filters = everyFilter();
    const before = filters.map((f) => formerQuery(db, f));
    migrate(db);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    assert.ok(!tables.includes("segment_stats"));
    const stats = new SqliteSegmentStats(db);
    filters.forEach((f, i) => assert.deepEqual(query(stats, MONTHS, f), before[i], JSON.stringify(f)));
  });
});
