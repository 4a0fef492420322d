import type Database from "better-sqlite3";
import {
  columnsOfStats,
  emptySegmentMonth,
  SegmentMonthColumnsBuilder,
  type SegmentMonthColumns,
  type SegmentMonthStats,
  type SegmentStatCell,
} from "../../engine/counts/segment-stats.js";
import {
  type CountsResultRepo,
  type ResultPageRows,
  type SegmentStatsQuery,
  type SegmentStatsRepo,
  type UsageRepo,
} from "../../app/ports/store.js";
import { type StoredCountsResult, type UsageRecord, type UsageTotals } from "../../domain/records.js";
import {
  addDetails,
  addTotals,
  cellMask,
  BatchGroupPacker,
  mergePackedDetails,
  mergePackedTotals,
  SegmentMonthCounters,
} from "./segment-month-pack.js";
import { inSpeedSteps, type SegmentCellBatch } from "../../engine/counts/segment-cells.js";
import {
  addRollupMonths,
  addRollups,
  ChangedYears,
  eachRollupMonth,
  monthIndexByYear,
  monthsByYear,
  rollupKey,
} from "./segment-rollups.js";
import { statementCache } from "./statements.js";
import { BlobArena } from "./blob-arena.js";
import { decodeResultPage, encodeResultPage, EXPIRED_RESULTS_PER_SAVE } from "../result-pages.js";
import { RollupCache } from "./rollup-cache.js";
import type { Sync } from "./async-port.js";
import { toCountsResult, type CountsResultRow } from "../rows.js";

type Merge = (older: Uint8Array, newer: Uint8Array, arena: BlobArena) => Buffer;

/**
 * The statements of a table in parts ("Parts"): the packed totals and details by segment × month, the
 * rollups by segment × year; each row is one part of its segment-period.
 */
const partedSql = (table: string, period: "month" | "year", merge: Merge, sqlFunction: string) => ({
  table,
  period,
  /** Two BLOBs of a segment-period as one, in JS and as the upsert's SQL function (registerTallyMerges). */
  merge,
  sqlFunction,
  // The selection's ids travel as one JSON array, so one prepared statement serves any size;
  // SQLite probes the key once per id. Periods asked are one or twelve in a row: the range is
  // read and the exact list checked in JS. A segment-period can be several rows, one per level.
  read: `SELECT segment_id, ${period}, cells FROM ${table}
         WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND ${period} BETWEEN ? AND ?`,
  /** A period's parts below a level, which a batch merges into that level. */
  partsBelow: `SELECT segment_id, level, cells FROM ${table}
         WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND ${period} = ? AND level < ?`,
  /** The parts below a level, once merged into it. */
  dropBelow: `DELETE FROM ${table}
         WHERE country = ? AND ${period} = ? AND level < ? AND segment_id IN (SELECT value FROM json_each(?))`,
  /** A period's parts, for compacting (it scans the country's keys: once a month). */
  periodParts: `SELECT segment_id, level, cells FROM ${table} WHERE country = ? AND ${period} = ?
         ORDER BY segment_id, level`,
  dropPeriodOf: `DELETE FROM ${table}
         WHERE country = ? AND ${period} = ? AND segment_id IN (SELECT value FROM json_each(?))`,
});
type PartedSql = ReturnType<typeof partedSql>;
const TOTALS = partedSql("segment_month_totals", "month", mergePackedTotals, "merge_segment_totals");
const DETAILS = partedSql("segment_month_details", "month", mergePackedDetails, "merge_segment_details");
/** Whole-month rollups (segment-rollups.ts): one row per segment × year and level. */
const ROLLUPS = partedSql("segment_year_rollups", "year", addRollups, "add_segment_rollups");
const PARTED = [TOTALS, DETAILS, ROLLUPS];
/** The count of batches that added to a country's month, this batch included. */
const NEXT_BATCH = `INSERT INTO segment_month_batches (country, month, batches) VALUES (?, ?, 1)
  ON CONFLICT (country, month) DO UPDATE SET batches = batches + 1 RETURNING batches`;

type PackedRow = [segmentId: number, month: string, cells: Buffer];

const BUMP_COUNTS_VERSION = `INSERT INTO segment_counts_versions (country, version) VALUES (?, 1)
  ON CONFLICT (country) DO UPDATE SET version = version + 1`;

/**
 * SQLite's page cache while a batch's tallies are written, in KiB. When a batch read the stored BLOBs of every
 * segment-month it touched and wrote them back, the pages read were evicted from better-sqlite3's default 16 MB
 * cache before their rows were written, and daily ingests into a month of Monaco stored 15-20 % faster late in the
 * month with 64 MB, held only for the batch (docs/performance.md, "Stop 49"). It still serves the parts a batch
 * merges ("Parts"); not measured again since.
 */
const BATCH_PAGE_CACHE_KIB = 65_536;

/**
 * Segment counts in the packed layout of segment-month-pack.ts, each segment-month stored in parts.
 *
 * Parts: a segment-month is one row per level, and reads add its rows up (exactly: the speed sums are
 * whole steps of 1/1024 km/h). The n-th batch to add to a country's month (segment_month_batches) writes
 * level t, the number of trailing zero bits of n: into it go what the batch adds and what its segments
 * hold at levels 0 to t, and their rows below t are dropped. A binary counter: a month of n batches keeps
 * at most log2(n) + 1 parts of a segment (5 for a month of daily ingests), and each cell is rewritten
 * about log2(n) times in all. Before, every batch read and rewrote the whole month so far, so daily
 * ingests stored more slowly each day of the month (docs/performance.md, "Stop 52"). A segment-year's
 * rollup is kept in parts the same way, at the level of its month's batch; the first batch into a month
 * compacts the months before it (compactMonthsBefore).
 */
export class SqliteSegmentStats implements Sync<SegmentStatsRepo> {
  private readonly sql: (sql: string) => Database.Statement;
  private readonly rollups: RollupCache;

  constructor(private readonly db: Database.Database) {
    this.sql = statementCache(db);
    this.rollups = new RollupCache(db);
    registerTallyMerges(db);
  }

  add(country: string, cells: SegmentStatCell[]): void {
    this.addGroups(country, new CellGroups(cells), new BlobArena());
  }

  addBatch(country: string, batch: SegmentCellBatch): void {
    const arena = new BlobArena();
    this.addGroups(country, new BatchGroups(batch, arena), arena);
  }

  /** The groups' segment-months merged into their month's level with their parts below it, and their year rollups. */
  private addGroups(country: string, groups: SegmentMonthGroups, arena: BlobArena): void {
    const cacheSize = this.db.pragma("cache_size", { simple: true }) as number;
    this.db.pragma(`cache_size = ${-BATCH_PAGE_CACHE_KIB}`);
    try {
      this.db.transaction(() => this.writeGroups(country, groups, arena))();
    } finally {
      this.db.pragma(`cache_size = ${cacheSize}`);
    }
  }

  /**
   * A method, and the groups an object, not closures made per batch: those were compiled afresh in every
   * batch (`--trace-opt`), and their loop runs once per batch.
   */
  private writeGroups(country: string, groups: SegmentMonthGroups, arena: BlobArena): void {
    const keys: [segmentId: number, month: string][] = [];
    for (let i = 0; i < groups.count; i++) keys.push(groups.key(i));
    const levels = this.levelsOf(country, keys);
    const totals = new PartMerge(this.sql, TOTALS, country, keys, levels, arena);
    const details = new PartMerge(this.sql, DETAILS, country, keys, levels, arena);
    const rollups = new YearRollups(country, arena);
    for (let i = 0; i < keys.length; i++) {
      const [segmentId, month] = keys[i];
      const added = groups.pack(i);
      totals.add(segmentId, month, added.totals);
      details.add(segmentId, month, added.details);
      rollups.set(segmentId, month, added.totals);
    }
    totals.write();
    details.write();
    rollups.writeParts(this.sql, levels);
    // In the same transaction: every connection that kept the former rollups drops them (rollup-cache.ts).
    this.sql(BUMP_COUNTS_VERSION).run(country);
    this.rollups.clear();
  }

  /** The level each month of a batch writes ("Parts"), counting the batch; a month's first batch compacts. */
  private levelsOf(country: string, keys: readonly [number, string][]): Map<string, number> {
    const levels = new Map<string, number>();
    for (const [, month] of keys)
      if (!levels.has(month)) {
        const { batches } = this.sql(NEXT_BATCH).get(country, month) as { batches: number };
        if (batches === 1) this.compactMonthsBefore(country, month);
        levels.set(month, trailingZeroBits(batches));
      }
    return levels;
  }

  /**
   * Compaction: the first batch into a month merges each segment-month's parts into one row, in every
   * earlier month of the country that batches added to since, and each of their years' rollups likewise.
   * That is usually the month before, now complete, and most calls read complete months: a cells-path call
   * over a month of daily ingests (5 parts) took ~3× the time of one over the same month in one row.
   */
  private compactMonthsBefore(country: string, month: string): void {
    const months = this.sql(
      "SELECT month FROM segment_month_batches WHERE country = ? AND month < ? AND batches > compacted",
    )
      .pluck()
      .all(country, month) as string[];
    const arena = new BlobArena();
    for (const earlier of months) {
      for (const table of [TOTALS, DETAILS]) this.compactParts(table, country, earlier, arena);
      this.sql("UPDATE segment_month_batches SET compacted = batches WHERE country = ? AND month = ?").run(
        country,
        earlier,
      );
    }
    for (const year of new Set(months.map((m) => m.slice(0, 4))))
      this.compactParts(ROLLUPS, country, year, arena);
  }

  /**
   * A period's segment-periods merged into one row each at COMPACTED_LEVEL, which later batches' merges never
   * reach: a year's rollup left at a low level was merged again by each month's next batches.
   */
  private compactParts(table: PartedSql, country: string, period: string, arena: BlobArena): void {
    const rows = this.sql(table.periodParts).raw().all(country, period) as [number, number, Buffer][];
    const merged: [segmentId: number, cells: Buffer][] = [];
    for (let first = 0, end = 1; first < rows.length; first = end++) {
      const segmentId = rows[first][0];
      while (end < rows.length && rows[end][0] === segmentId) end++;
      if (end - first === 1 && rows[first][1] === COMPACTED_LEVEL) continue;
      let cells = rows[end - 1][2];
      for (let k = end - 2; k >= first; k--) cells = table.merge(cells, rows[k][2], arena);
      merged.push([segmentId, cells]);
    }
    if (merged.length === 0) return;
    // Their parts go first, so the merged rows are new rows, not merged again with one of them.
    this.sql(table.dropPeriodOf).run(country, period, JSON.stringify(merged.map(([segmentId]) => segmentId)));
    const put = new RowUpserts(this.sql, table, "parts");
    for (const [segmentId, cells] of merged) put.add([country, segmentId, period, COMPACTED_LEVEL], cells);
    put.flush();
  }

  query(q: SegmentStatsQuery): SegmentMonthStats[] {
    return this.read(q, true);
  }

  totals(q: SegmentStatsQuery): SegmentMonthColumns {
    const months = [...new Set(q.months)].sort();
    const rollup = rollupKey(q);
    const lists = [q.months, q.daysOfWeek, q.hours, q.directions, q.vehicleClasses, q.sources];
    if (rollup === null || q.segmentIds.length === 0 || lists.some((l) => l.length === 0))
      return columnsOfStats(this.read({ ...q, details: false }, true), months);
    const monthIndex = monthIndexByYear(months);
    const years = [...monthIndex.keys()];
    const out = new SegmentMonthColumnsBuilder(months, q.segmentIds.length * months.length);
    this.rollups.each(q.country, q.segmentIds, years, this.readRollups(q.country), (id, year, r) =>
      addRollupMonths(r, rollup, id, monthIndex.get(year)!, out),
    );
    return out.done();
  }

  /** The rollup rows of some segments over a range of years, as the rollup cache asks for them. */
  private readRollups(country: string) {
    return (segmentIds: number[], years: readonly string[]) => {
      const rows = this.sql(ROLLUPS.read)
        .raw()
        .all(country, JSON.stringify(segmentIds), years[0], years[years.length - 1]) as [
        number,
        string,
        Buffer,
      ][];
      return mergedParts(rows, addRollups);
    };
  }

  /** The query answered from the cells, never from the rollups (for tests that compare the two paths). */
  queryCells(q: SegmentStatsQuery): SegmentMonthStats[] {
    return this.read(q, false);
  }

  private read(q: SegmentStatsQuery, useRollups: boolean): SegmentMonthStats[] {
    const lists = [q.months, q.daysOfWeek, q.hours, q.directions, q.vehicleClasses, q.sources];
    if (q.segmentIds.length === 0 || lists.some((l) => l.length === 0)) return [];
    const months = [...q.months].sort();
    const wanted = new Set(months);
    // The cells' path only: a call the rollups answer needs neither (the ids as JSON are ~6 KB per call).
    const mask = () => cellMask(q);
    const read = (table: PartedSql) =>
      this.sql(table.read)
        .raw()
        .all(q.country, JSON.stringify(q.segmentIds), months[0], months[months.length - 1]) as PackedRow[];
    // Whole days of the whole week: the precomputed rollups, else the months' cells.
    const rollup = useRollups ? rollupKey(q) : null;
    // Not push(...rows): a year is 12,000 arguments.
    const found: SegmentMonthStats[] = rollup !== null ? this.fromRollups(q, rollup, months) : [];
    let byKey: Map<string, SegmentMonthStats> | undefined;
    if (rollup === null) {
      const cellsAsked = mask();
      // A segment-month's parts add into one result.
      byKey = new Map();
      for (const [segmentId, month, cells] of read(TOTALS)) {
        if (!wanted.has(month)) continue;
        const key = `${segmentId}|${month}`;
        let stats = byKey.get(key);
        if (!stats) byKey.set(key, (stats = emptySegmentMonth(segmentId, month)));
        addTotals(cells, cellsAsked, stats);
      }
      for (const stats of byKey.values()) if (stats.trips > 0) found.push(stats);
    }
    if (q.details !== false && found.length > 0) {
      byKey ??= new Map(found.map((s) => [`${s.segmentId}|${s.month}`, s]));
      const cellsAsked = mask();
      for (const [segmentId, month, cells] of read(DETAILS)) {
        const stats = byKey.get(`${segmentId}|${month}`);
        if (stats) addDetails(cells, cellsAsked, stats);
      }
    }
    // SQLite reads the ids in key order, so the rows usually come sorted already.
    return inOrder(found) ? found : found.sort(bySegmentAndMonth);
  }

  /** The asked months (sorted YYYY-MM) with trips, from the segment-years' rollups. */
  private fromRollups(q: SegmentStatsQuery, key: number, months: string[]): SegmentMonthStats[] {
    const wanted = monthsByYear(months);
    const years = [...wanted.keys()];
    const read = this.readRollups(q.country);
    const found: SegmentMonthStats[] = [];
    // One callback for every segment (not a closure per segment): it reads the segment being visited.
    let segmentId = 0;
    const add = (month: string, trips: number, speedCount: number, speedSumKph: number) =>
      // A literal, not a spread of emptySegmentMonth: a year asks for 12,000 of these. Without
      // details nothing adds to the histogram and shares: they can be one frozen empty value.
      found.push({
        segmentId,
        month,
        trips,
        speedSumKph,
        speedCount,
        speedHistogram: q.details === false ? NO_HISTOGRAM : [],
        purposes: q.details === false ? NO_SHARES : {},
        incomes: q.details === false ? NO_SHARES : {},
      });
    this.rollups.each(q.country, q.segmentIds, years, read, (id, year, rollup) => {
      segmentId = id;
      eachRollupMonth(rollup, key, wanted.get(year)!, add);
    });
    return found;
  }
}

/** Segment-months to add to: each one's key, and what it adds as packed BLOBs. */
interface SegmentMonthGroups {
  readonly count: number;
  key(i: number): [segmentId: number, month: string];
  pack(i: number): { totals: Buffer; details: Buffer };
}

/** Loose cells, grouped per segment-month. */
class CellGroups implements SegmentMonthGroups {
  private readonly groups: SegmentStatCell[][];

  constructor(cells: SegmentStatCell[]) {
    this.groups = segmentMonthsOf(cells);
  }

  get count(): number {
    return this.groups.length;
  }

  key(i: number): [segmentId: number, month: string] {
    return [this.groups[i][0].segmentId, this.groups[i][0].month];
  }

  /**
   * Speed sums in whole steps of 1/1024 km/h, as ingests tally them: sums of those are exact, so a
   * segment-month's parts and its rollups add up alike in any order ("Parts").
   */
  pack(i: number): { totals: Buffer; details: Buffer } {
    const counters = new SegmentMonthCounters();
    for (const c of this.groups[i]) counters.add(c, inSpeedSteps(c.speedSumKph));
    return counters.encode();
  }
}

/** An ingest batch's cells, summed per segment-month (segment-cells.ts), packed into `arena`'s BLOBs. */
class BatchGroups implements SegmentMonthGroups {
  private readonly packer: BatchGroupPacker;

  constructor(
    private readonly batch: SegmentCellBatch,
    arena: BlobArena,
  ) {
    this.packer = new BatchGroupPacker(batch, arena);
  }

  get count(): number {
    return this.batch.months.length;
  }

  key(g: number): [segmentId: number, month: string] {
    return [this.batch.segmentIds[g], this.batch.months[g]];
  }

  pack(g: number): { totals: Buffer; details: Buffer } {
    return this.packer.pack(g);
  }
}

/**
 * The cells grouped per segment-month, each group in the cells' order (the speed sums add up in it),
 * groups in order of first appearance. Keyed by number, then month: a key string per cell cost more
 * than adding the cell.
 */
function segmentMonthsOf(cells: SegmentStatCell[]): SegmentStatCell[][] {
  const groups: SegmentStatCell[][] = [];
  const bySegment = new Map<number, Map<string, SegmentStatCell[]>>();
  for (const c of cells) {
    let byMonth = bySegment.get(c.segmentId);
    if (!byMonth) bySegment.set(c.segmentId, (byMonth = new Map()));
    const group = byMonth.get(c.month);
    if (group) group.push(c);
    else {
      const created = [c];
      byMonth.set(c.month, created);
      groups.push(created);
    }
  }
  return groups;
}

const NO_HISTOGRAM = Object.freeze([]) as unknown as number[];
const NO_SHARES = Object.freeze({}) as Record<string, number>;

const bySegmentAndMonth = (a: SegmentMonthStats, b: SegmentMonthStats) =>
  a.segmentId - b.segmentId || (a.month < b.month ? -1 : a.month > b.month ? 1 : 0);
const inOrder = (stats: SegmentMonthStats[]) =>
  stats.every((s, i) => i === 0 || bySegmentAndMonth(stats[i - 1], s) < 0);

/**
 * The rollups of the segment-years a batch touched: what it added to each month gathered, each year
 * written once, as a part ("Parts") that adds up with the stored ones.
 */
export class YearRollups extends ChangedYears {
  /**
   * The changed segment-years' new entries written at a level per year: the highest its months were written
   * at (the months' counters: any level keeps the sum, and these stay as few as the months' parts).
   */
  writeParts(sql: (sql: string) => Database.Statement, monthLevels: ReadonlyMap<string, number>): void {
    const levels = new Map<string, number>();
    for (const [month, level] of monthLevels)
      levels.set(month.slice(0, 4), Math.max(level, levels.get(month.slice(0, 4)) ?? 0));
    const keys = [...this.years.values()].map(({ segmentId, year }) => [segmentId, year] as [number, string]);
    const parts = new PartMerge(sql, ROLLUPS, this.country, keys, levels, this.arena ?? new BlobArena());
    for (const { segmentId, year, entries } of this.rows()) parts.add(segmentId, year, entries);
    parts.write();
    this.years.clear();
  }

  /** The changed segment-years added to their one row each (the migration that computed them, before parts). */
  writeWhole(sql: (sql: string) => Database.Statement): void {
    const put = new RowUpserts(sql, ROLLUPS, "whole");
    for (const { segmentId, year, entries } of this.rows()) put.add([this.country, segmentId, year], entries);
    put.flush();
    this.years.clear();
  }

  /** Each changed segment-year's new entries as a rollup BLOB of their own. */
  private *rows() {
    for (const { segmentId, year, months } of this.years.values())
      yield { segmentId, year, entries: this.replaceMonths(undefined, months) };
  }
}

/** The SQL functions of the parted tables' upserts on a connection (again on the same one: the same functions). */
export function registerTallyMerges(db: Database.Database): void {
  // One arena per connection: SQLite copies a function's BLOB, so its chunks are freed once filled.
  const arena = new BlobArena();
  for (const { sqlFunction, merge } of PARTED)
    db.function(sqlFunction, { deterministic: true }, (older, newer) =>
      merge(older as Buffer, newer as Buffer, arena),
    );
}

/** Segment ids by period (month or year), for one query per period that probes each segment's key once. */
function idsByPeriod(keys: readonly [segmentId: number, period: string][]): Map<string, number[]> {
  const byPeriod = new Map<string, number[]>();
  for (const [segmentId, period] of keys) {
    let ids = byPeriod.get(period);
    if (!ids) byPeriod.set(period, (ids = []));
    ids.push(segmentId);
  }
  return byPeriod;
}

/**
 * One parted table's side of a batch ("Parts"): each segment-period's stored parts below its period's level,
 * read in one query per period, merged with what the batch adds and written at that level (merged by the
 * upsert with a part there already); then the merged parts below it dropped. Half the batches write level 0
 * and read nothing.
 */
class PartMerge {
  /** Period → segment id → its parts below the period's level, lowest level first. */
  private readonly stored = new Map<string, Map<number, Buffer[]>>();
  private readonly put: RowUpserts;

  constructor(
    private readonly sql: (sql: string) => Database.Statement,
    private readonly table: PartedSql,
    private readonly country: string,
    keys: readonly [segmentId: number, period: string][],
    private readonly levels: ReadonlyMap<string, number>,
    private readonly arena: BlobArena,
  ) {
    for (const [period, ids] of idsByPeriod(keys)) {
      if (levels.get(period) === 0) continue;
      const rows = sql(table.partsBelow)
        .raw()
        .all(country, JSON.stringify(ids), period, levels.get(period)) as [number, number, Buffer][];
      const bySegment = new Map<number, Buffer[]>();
      for (const [segmentId, , cells] of rows.sort((a, b) => a[1] - b[1])) {
        const parts = bySegment.get(segmentId);
        if (parts) parts.push(cells);
        else bySegment.set(segmentId, [cells]);
      }
      this.stored.set(period, bySegment);
    }
    this.put = new RowUpserts(sql, table, "parts");
  }

  /** A segment-period's BLOB of what the batch adds, merged with its stored parts (older data first). */
  add(segmentId: number, period: string, added: Buffer): void {
    let merged = added;
    const parts = this.stored.get(period)?.get(segmentId);
    if (parts)
      for (let k = parts.length - 1; k >= 0; k--) merged = this.table.merge(parts[k], merged, this.arena);
    this.put.add([this.country, segmentId, period, this.levels.get(period)!], merged);
  }

  write(): void {
    this.put.flush();
    for (const [period, bySegment] of this.stored)
      if (bySegment.size > 0)
        this.sql(this.table.dropBelow).run(
          this.country,
          period,
          this.levels.get(period),
          JSON.stringify([...bySegment.keys()]),
        );
  }
}

/** The level of compacted rows: a batch writes level 31 only as the 2^31-th of its period. */
const COMPACTED_LEVEL = 31;

/** The number of trailing zero bits of n (1 ≤ n < 2^31). */
const trailingZeroBits = (n: number) => 31 - Math.clz32(n & -n);

/**
 * Every stored row of a parted table, each segment-period's parts merged into one BLOB, in key order: what is
 * stored, however the batches fell (digests, copies into a store of one row per segment-period).
 */
export function* mergedPackedRows(
  db: Database.Database,
  table: "segment_month_totals" | "segment_month_details" | "segment_year_rollups",
): Generator<[country: string, segmentId: number, period: string, cells: Buffer]> {
  const { merge, period } = PARTED.find((t) => t.table === table)!;
  const arena = new BlobArena();
  const rows = db
    .prepare(
      `SELECT country, segment_id, ${period}, cells FROM ${table} ORDER BY country, segment_id, ${period}, level`,
    )
    .raw()
    .iterate() as Iterable<[string, number, string, Buffer]>;
  let held: [string, number, string, Buffer] | undefined;
  for (const row of rows) {
    if (held && held[0] === row[0] && held[1] === row[1] && held[2] === row[2])
      held[3] = merge(row[3], held[3], arena);
    else {
      if (held) yield held;
      held = row;
    }
  }
  if (held) yield held;
}

/** Rows of (segment, period, BLOB) with each segment-period's parts merged into one, in first-seen order. */
function mergedParts(rows: [number, string, Buffer][], merge: Merge): [number, string, Buffer][] {
  const byKey = new Map<string, [number, string, Buffer]>();
  const arena = new BlobArena();
  for (const row of rows) {
    const key = `${row[0]}|${row[1]}`;
    const held = byKey.get(key);
    if (held) held[2] = merge(row[2], held[2], arena);
    else byKey.set(key, row);
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}

/** Rows per multi-row upsert (a power of two): 5 parameters at most, far below SQLite's limit of 32,766. */
const ROWS_PER_UPSERT = 256;

/**
 * Upserts of rows of a parted table (country, segment, period, level, cells; "whole": without the level, as
 * before parts), added to a row already there by the table's merge, gathered and written ROWS_PER_UPSERT
 * per statement: one statement per row cost ~2 µs of overhead each, ~15,000 times for a 4,000-trip batch.
 */
class RowUpserts {
  private params: unknown[] = [];
  private readonly key: string[];

  constructor(
    private readonly sql: (sql: string) => Database.Statement,
    private readonly table: PartedSql,
    shape: "parts" | "whole",
  ) {
    this.key = ["country", "segment_id", table.period, ...(shape === "parts" ? ["level"] : [])];
  }

  add(key: readonly (string | number)[], cells: Buffer): void {
    for (const value of key) this.params.push(value);
    this.params.push(cells);
    if (this.params.length === (this.key.length + 1) * ROWS_PER_UPSERT) this.flush();
  }

  /** Writes what is gathered, in statements of power-of-two row counts (so few statements are ever prepared). */
  flush(): void {
    const width = this.key.length + 1;
    let from = 0;
    for (let rows = ROWS_PER_UPSERT; rows >= 1; rows >>= 1)
      for (; width * (from + rows) <= this.params.length; from += rows)
        this.sql(upsertSql(this.table, this.key, rows)).run(
          this.params.slice(width * from, width * (from + rows)),
        );
    this.params = [];
  }
}

const upsertSqlCache = new Map<string, string>();

function upsertSql(table: PartedSql, key: readonly string[], rows: number): string {
  const cacheKey = `${table.table}|${key.length}|${rows}`;
  let sql = upsertSqlCache.get(cacheKey);
  if (!sql) {
    const row = `(${[...key, "cells"].map(() => "?").join(", ")})`;
    const values = Array.from({ length: rows }, () => row).join(", ");
    sql = `INSERT INTO ${table.table} (${key.join(", ")}, cells) VALUES ${values}
      ON CONFLICT (${key.join(", ")}) DO UPDATE SET cells = ${table.sqlFunction}(cells, excluded.cells)`;
    upsertSqlCache.set(cacheKey, sql);
  }
  return sql;
}

export class SqliteCountsResults implements Sync<CountsResultRepo> {
  private readonly sql: (sql: string) => Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.sql = statementCache(db);
  }

  save(r: StoredCountsResult, pages: readonly ResultPageRows[], now: string): void {
    const putPage = this.sql("INSERT INTO counts_result_pages (request_id, page, rows) VALUES (?, ?, ?)");
    this.db.transaction(() => {
      // Pages go with their result (ON DELETE CASCADE).
      this.sql(
        `DELETE FROM counts_results WHERE request_id IN
           (SELECT request_id FROM counts_results WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
      ).run(now, EXPIRED_RESULTS_PER_SAVE);
      this.sql(
        `INSERT INTO counts_results (request_id, org_id, kind, columns, extra, page_size, total_rows, created_at,
           expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        r.requestId,
        r.orgId,
        r.kind,
        JSON.stringify(r.columns),
        JSON.stringify(r.extra),
        r.pageSize,
        r.totalRows,
        r.createdAt,
        r.expiresAt,
      );
      pages.forEach((rows, i) => putPage.run(r.requestId, i + 1, encodeResultPage(rows)));
    })();
  }

  get(
    orgId: string,
    kind: StoredCountsResult["kind"],
    requestId: string,
    now: string,
  ): StoredCountsResult | null {
    const row = this.sql(
      "SELECT * FROM counts_results WHERE request_id = ? AND org_id = ? AND kind = ? AND expires_at > ?",
    ).get(requestId, orgId, kind, now) as CountsResultRow | undefined;
    if (!row) return null;
    return toCountsResult(row);
  }

  page(requestId: string, page: number): unknown[][] | null {
    const row = this.sql("SELECT rows FROM counts_result_pages WHERE request_id = ? AND page = ?").get(
      requestId,
      page,
    ) as { rows: string | Buffer } | undefined;
    if (!row) return null;
    // Pages stored before the column BLOBs are JSON text.
    return typeof row.rows === "string" ? (JSON.parse(row.rows) as unknown[][]) : decodeResultPage(row.rows);
  }
}

export class SqliteUsage implements Sync<UsageRepo> {
  private readonly sql: (sql: string) => Database.Statement;

  constructor(db: Database.Database) {
    this.sql = statementCache(db);
  }

  record(u: UsageRecord): void {
    this.sql(
      "INSERT INTO counts_usage (key_id, org_id, at, segments, fields, units) VALUES (?, ?, ?, ?, ?, ?)",
    ).run(u.keyId, u.orgId, u.at, u.segments, u.fields, u.units);
  }

  totals(orgId: string, from: string, to: string): UsageTotals[] {
    const rows = this.sql(
      `SELECT key_id, COUNT(*) AS calls, SUM(segments) AS segments, SUM(fields) AS fields, SUM(units) AS units
         FROM counts_usage WHERE org_id = ? AND at >= ? AND at < ? GROUP BY key_id ORDER BY key_id`,
    ).all(orgId, from, to) as {
      key_id: string;
      calls: number;
      segments: number;
      fields: number;
      units: number;
    }[];
    return rows.map((r) => ({
      keyId: r.key_id,
      calls: r.calls,
      segments: r.segments,
      fields: r.fields,
      units: r.units,
    }));
  }

  unitsOfKey(keyId: string, from: string, to: string): number {
    const row = this.sql(
      "SELECT COALESCE(SUM(units), 0) AS units FROM counts_usage WHERE key_id = ? AND at >= ? AND at < ?",
    ).get(keyId, from, to) as { units: number };
    return row.units;
  }

  setQuota(keyIdOrPrefix: string, units: number | null): string | null {
    const row = this.sql("SELECT id FROM api_keys WHERE id = ? OR prefix = ?").get(
      keyIdOrPrefix,
      keyIdOrPrefix,
    ) as { id: string } | undefined;
    if (!row) return null;
    this.sql("UPDATE api_keys SET counts_quota_units = ? WHERE id = ?").run(units, row.id);
    return row.id;
  }

  quotaOf(keyId: string): number | null {
    const row = this.sql("SELECT counts_quota_units AS q FROM api_keys WHERE id = ?").get(keyId) as
      { q: number | null } | undefined;
    return row?.q ?? null;
  }
}
