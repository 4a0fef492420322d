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
  monthRollupBlob,
  monthsByYear,
  rollupKey,
} from "./segment-rollups.js";
import { statementCache } from "./statements.js";
import { monthBefore } from "../../engine/time.js";
import { BlobArena } from "./blob-arena.js";
import { decodeResultPage, encodeResultPage, EXPIRED_RESULTS_PER_SAVE } from "../result-pages.js";
import { RollupCache } from "./rollup-cache.js";
import type { Sync } from "./async-port.js";
import { toCountsResult, type CountsResultRow } from "../rows.js";

type Merge = (older: Uint8Array, newer: Uint8Array, arena: BlobArena) => Buffer;

/** A part's BLOBs: its cells, and on the totals its rollup entries not yet in the year's rollup ("Parts"). */
interface PartBlobs {
  cells: Buffer;
  rollup: Buffer | null;
}

/**
 * The statements of a table in parts ("Parts"): the packed totals and details by segment × month, the
 * rollups by segment × year; each row is one part of its segment-period. The totals' parts carry a
 * `rollup` column too: the month's rollup entries of what the part holds, until compaction moves them
 * into the year's rollup.
 */
const partedSql = (
  table: string,
  period: "month" | "year",
  merge: Merge,
  sqlFunction: string,
  withRollup = false,
) => ({
  table,
  period,
  /** Two BLOBs of a segment-period as one, in JS and as the upsert's SQL function (registerTallyMerges). */
  merge,
  sqlFunction,
  withRollup,
  // The selection's ids travel as one JSON array, so one prepared statement serves any size;
  // SQLite probes the key once per id. Periods asked are one or twelve in a row: the range is
  // read and the exact list checked in JS. A segment-period can be several rows, one per level.
  read: `SELECT segment_id, ${period}, cells FROM ${table}
         WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND ${period} BETWEEN ? AND ?`,
  /** A period's parts below a level, which a batch merges into that level. */
  partsBelow: `SELECT segment_id, level, cells${withRollup ? ", rollup" : ""} FROM ${table}
         WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND ${period} = ? AND level < ?`,
  /** The parts below a level, once merged into it. */
  dropBelow: `DELETE FROM ${table}
         WHERE country = ? AND ${period} = ? AND level < ? AND segment_id IN (SELECT value FROM json_each(?))`,
  /** A period's parts, for compacting (it scans the country's keys: once a month). */
  periodParts: `SELECT segment_id, level, cells${withRollup ? ", rollup" : ""} FROM ${table} WHERE country = ? AND ${period} = ?
         ORDER BY segment_id, level`,
  dropPeriodOf: `DELETE FROM ${table}
         WHERE country = ? AND ${period} = ? AND segment_id IN (SELECT value FROM json_each(?))`,
});
type PartedSql = ReturnType<typeof partedSql>;
const TOTALS = partedSql("segment_month_totals", "month", mergePackedTotals, "merge_segment_totals", true);
const DETAILS = partedSql("segment_month_details", "month", mergePackedDetails, "merge_segment_details");
/** Whole-month rollups (segment-rollups.ts) of compacted months: one row per segment × year and level. */
const ROLLUPS = partedSql("segment_year_rollups", "year", addRollups, "add_segment_rollups");
const PARTED = [TOTALS, DETAILS, ROLLUPS];
/** Months of a country's years whose parts still hold rollup entries: batches added to them since compaction. */
const OPEN_MONTHS = `SELECT month FROM segment_month_batches
  WHERE country = ? AND month >= ? AND month < ? AND batches > compacted`;
/** The rollup entries held by some segments' parts of some months. */
const OPEN_ROLLUPS = `SELECT segment_id, month, rollup FROM segment_month_totals
  WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND month IN (SELECT value FROM json_each(?))
    AND rollup IS NOT NULL`;
const BATCHES_SO_FAR = "SELECT batches FROM segment_month_batches WHERE country = ? AND month = ?";
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
 * ingests stored more slowly each day of the month (docs/performance.md, "Stop 52"). Each totals part also
 * holds the rollup entries of what it holds (its `rollup` column), merged with it; the first batch into a
 * month compacts the months before it (compactMonthsBefore), moving their parts' rollup entries into the
 * segment-years' rollups. A rollup read adds the entries of the months not compacted yet: writing each
 * batch's rollups as rows of their own had cost ~40 % of a daily ingest's tallies (docs/performance.md,
 * "Stop 53").
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
    for (let i = 0; i < keys.length; i++) {
      const [segmentId, month] = keys[i];
      const added = groups.pack(i);
      const rollup = monthRollupBlob(added.totals, Number(month.slice(5, 7)), arena);
      totals.add(segmentId, month, { cells: added.totals, rollup });
      details.add(segmentId, month, { cells: added.details, rollup: null });
    }
    totals.write();
    details.write();
    // In the same transaction: every connection that kept the former rollups drops them (rollup-cache.ts).
    this.sql(BUMP_COUNTS_VERSION).run(country);
    this.rollups.clear();
  }

  /**
   * The level each month of a batch writes ("Parts"), counting the batch. A month's first batch compacts first,
   * before any month is counted: a month compacted while this batch adds to it too must stay open for that.
   */
  private levelsOf(country: string, keys: readonly [number, string][]): Map<string, number> {
    const months = [...new Set(keys.map(([, month]) => month))];
    for (const month of months)
      if (this.sql(BATCHES_SO_FAR).get(country, month) === undefined)
        this.compactMonthsBefore(country, month);
    const levels = new Map<string, number>();
    for (const month of months) {
      const { batches } = this.sql(NEXT_BATCH).get(country, month) as { batches: number };
      levels.set(month, trailingZeroBits(batches));
    }
    return levels;
  }

  /**
   * The months before the one before the country's newest compacted ("Parts"), as the end of an ingest run asks:
   * a run whose batches each added to several months (a year back-filled from one file) had no first batch into
   * a later month, and would leave every month's rollup entries in its totals' parts, which each rollup read then
   * adds. Not the month before the newest: a day's export often holds a few trips of the next month's first
   * hours, and compacting the month in progress after each daily ingest rewrote it every day (the `ingest-daily`
   * bench's CPU per call grew from 0.87 to 1.59 s through the month).
   */
  compact(country: string): void {
    const newest = this.sql("SELECT max(month) FROM segment_month_batches WHERE country = ?")
      .pluck()
      .get(country) as string | null;
    if (newest !== null) this.db.transaction(() => this.compactMonthsBefore(country, monthBefore(newest)))();
  }

  /**
   * Compaction: the first batch into a month merges each segment-month's parts into one row, in every
   * earlier month of the country that batches added to since, and adds their rollup entries to their years'
   * rollups, each merged into one row likewise. That is usually the month before, now complete, and most
   * calls read complete months: a cells-path call over a month of daily ingests (5 parts) took ~3× the time
   * of one over the same month in one row.
   */
  private compactMonthsBefore(country: string, month: string): void {
    const months = this.sql(
      "SELECT month FROM segment_month_batches WHERE country = ? AND month < ? AND batches > compacted",
    )
      .pluck()
      .all(country, month) as string[];
    const arena = new BlobArena();
    for (const earlier of months) {
      const rollups = new RowUpserts(this.sql, ROLLUPS, "parts");
      for (const [segmentId, rollup] of this.compactParts(TOTALS, country, earlier, arena))
        rollups.add([country, segmentId, earlier.slice(0, 4), COMPACTED_LEVEL], [rollup]);
      rollups.flush();
      this.compactParts(DETAILS, country, earlier, arena);
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
   * reach: a year's rollup left at a low level was merged again by each month's next batches. Answers the
   * rollup entries the merged totals' parts held (the compacted rows hold none: their year's rollup does).
   */
  private compactParts(
    table: PartedSql,
    country: string,
    period: string,
    arena: BlobArena,
  ): [segmentId: number, rollup: Buffer][] {
    const rows = this.sql(table.periodParts).raw().all(country, period) as PartRow[];
    const merged: [segmentId: number, part: PartBlobs][] = [];
    for (let first = 0, end = 1; first < rows.length; first = end++) {
      const segmentId = rows[first][0];
      while (end < rows.length && rows[end][0] === segmentId) end++;
      if (end - first === 1 && rows[first][1] === COMPACTED_LEVEL) continue;
      // Lowest level first, as a batch merges (PartMerge.add).
      let part = blobsOf(rows[first]);
      for (let k = first + 1; k < end; k++) part = mergeParts(table, blobsOf(rows[k]), part, arena);
      merged.push([segmentId, part]);
    }
    if (merged.length === 0) return [];
    // Their parts go first, so the merged rows are new rows, not merged again with one of them.
    this.sql(table.dropPeriodOf).run(country, period, JSON.stringify(merged.map(([segmentId]) => segmentId)));
    const put = new RowUpserts(this.sql, table, "parts");
    for (const [segmentId, { cells }] of merged)
      put.add([country, segmentId, period, COMPACTED_LEVEL], valuesOf(table, { cells, rollup: null }));
    put.flush();
    const rollups: [number, Buffer][] = [];
    for (const [segmentId, { rollup }] of merged) if (rollup) rollups.push([segmentId, rollup]);
    return rollups;
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

  /**
   * The rollups of some segments over a range of years, as the rollup cache asks for them: the years' rows,
   * plus the rollup entries still in the parts of months not compacted yet ("Parts").
   */
  private readRollups(country: string) {
    return (segmentIds: number[], years: readonly string[]) => {
      const ids = JSON.stringify(segmentIds);
      const [first, last] = [years[0], years[years.length - 1]];
      const rows = this.sql(ROLLUPS.read).raw().all(country, ids, first, last) as [number, string, Buffer][];
      const open = this.sql(OPEN_MONTHS)
        .pluck()
        .all(country, first, String(Number(last) + 1)) as string[];
      if (open.length > 0)
        for (const [segmentId, month, rollup] of this.sql(OPEN_ROLLUPS)
          .raw()
          .iterate(country, ids, JSON.stringify(open)) as Iterable<[number, string, Buffer]>)
          rows.push([segmentId, month.slice(0, 4), rollup]);
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
 * The rollups of segment-years, gathered from their months' totals and added to their one row each (the
 * migration that computed them, before parts).
 */
export class YearRollups extends ChangedYears {
  writeWhole(sql: (sql: string) => Database.Statement): void {
    const put = new RowUpserts(sql, ROLLUPS, "whole");
    for (const { segmentId, year, months } of this.years.values())
      put.add([this.country, segmentId, year], [this.replaceMonths(undefined, months)]);
    put.flush();
    this.years.clear();
  }
}

/** The SQL functions of the parted tables' upserts on a connection (again on the same one: the same functions). */
export function registerTallyMerges(db: Database.Database): void {
  // One arena per connection: SQLite copies a function's BLOB, so its chunks are freed once filled.
  const arena = new BlobArena();
  for (const { sqlFunction, merge } of PARTED)
    db.function(sqlFunction, { deterministic: true }, (older, newer) =>
      mergeNullable(merge, older as Buffer | null, newer as Buffer | null, arena),
    );
}

/** Two BLOBs as one, either of them NULL (a totals part's rollup entries once in the year's rollup). */
function mergeNullable(merge: Merge, older: Buffer | null, newer: Buffer | null, arena: BlobArena) {
  return older === null ? newer : newer === null ? older : merge(older, newer, arena);
}

/** A stored part: segment id, level, cells, and on the totals its rollup entries. */
type PartRow = [segmentId: number, level: number, cells: Buffer, rollup?: Buffer | null];

const blobsOf = (row: PartRow): PartBlobs => ({ cells: row[2], rollup: row[3] ?? null });

/** Two parts of a segment-period as one, their rollup entries too. */
function mergeParts(table: PartedSql, older: PartBlobs, newer: PartBlobs, arena: BlobArena): PartBlobs {
  return {
    cells: table.merge(older.cells, newer.cells, arena),
    rollup: mergeNullable(addRollups, older.rollup, newer.rollup, arena),
  };
}

/** A part's value columns in the table's order (RowUpserts). */
const valuesOf = (table: PartedSql, part: PartBlobs) =>
  table.withRollup ? [part.cells, part.rollup] : [part.cells];

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
  private readonly stored = new Map<string, Map<number, PartBlobs[]>>();
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
        .all(country, JSON.stringify(ids), period, levels.get(period)) as PartRow[];
      const bySegment = new Map<number, PartBlobs[]>();
      for (const row of rows.sort((a, b) => a[1] - b[1])) {
        const parts = bySegment.get(row[0]);
        if (parts) parts.push(blobsOf(row));
        else bySegment.set(row[0], [blobsOf(row)]);
      }
      this.stored.set(period, bySegment);
    }
    this.put = new RowUpserts(sql, table, "parts");
  }

  /**
   * A segment-period's BLOBs of what the batch adds, merged with its stored parts from the lowest level up: the
   * newest and smallest first, so each merge's older side is older data and the larger parts are read once.
   */
  add(segmentId: number, period: string, added: PartBlobs): void {
    let merged = added;
    const parts = this.stored.get(period)?.get(segmentId);
    if (parts) for (const part of parts) merged = mergeParts(this.table, part, merged, this.arena);
    this.put.add([this.country, segmentId, period, this.levels.get(period)!], valuesOf(this.table, merged));
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

type PackedTable = "segment_month_totals" | "segment_month_details" | "segment_year_rollups";
type MergedRow = [country: string, segmentId: number, period: string, cells: Buffer];

/**
 * Every stored row of a parted table, each segment-period's parts merged into one BLOB, in key order: what is
 * stored, however the batches fell (digests, copies into a store of one row per segment-period). The rollups
 * are those reads serve: with the entries still in the totals' parts of months not compacted yet.
 */
export function mergedPackedRows(db: Database.Database, table: PackedTable): Iterable<MergedRow> {
  return table === "segment_year_rollups" ? servedRollupRows(db) : foldedRows(db, table);
}

function servedRollupRows(db: Database.Database): MergedRow[] {
  const arena = new BlobArena();
  const byKey = new Map<string, MergedRow>();
  const add = (row: MergedRow) => {
    const key = `${row[0]}|${row[1]}|${row[2]}`;
    const held = byKey.get(key);
    if (held) held[3] = addRollups(held[3], row[3], arena);
    else byKey.set(key, row);
  };
  for (const row of foldedRows(db, "segment_year_rollups")) add(row);
  const open = db
    .prepare("SELECT country, segment_id, month, rollup FROM segment_month_totals WHERE rollup IS NOT NULL")
    .raw()
    .iterate() as Iterable<MergedRow>;
  for (const [country, segmentId, month, rollup] of open)
    add([country, segmentId, month.slice(0, 4), rollup]);
  const order = (a: MergedRow, b: MergedRow) =>
    a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
  return [...byKey.values()].sort(order);
}

function* foldedRows(db: Database.Database, table: PackedTable): Generator<MergedRow> {
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

/** Rows per multi-row upsert (a power of two): 6 parameters a row at most, far below SQLite's limit of 32,766. */
const ROWS_PER_UPSERT = 256;

/**
 * Upserts of rows of a parted table (country, segment, period, level, cells; "whole": without the level, as
 * before parts), added to a row already there by the table's merge, gathered and written ROWS_PER_UPSERT
 * per statement: one statement per row cost ~2 µs of overhead each, ~15,000 times for a 4,000-trip batch.
 */
class RowUpserts {
  private params: unknown[] = [];
  private readonly key: string[];
  private readonly width: number;

  constructor(
    private readonly sql: (sql: string) => Database.Statement,
    private readonly table: PartedSql,
    shape: "parts" | "whole",
  ) {
    this.key = ["country", "segment_id", table.period, ...(shape === "parts" ? ["level"] : [])];
    this.width = this.key.length + valueColumns(table).length;
  }

  /** A row: its key, then its value columns (valueColumns). */
  add(key: readonly (string | number)[], values: readonly (Buffer | null)[]): void {
    for (const value of key) this.params.push(value);
    for (const value of values) this.params.push(value);
    if (this.params.length === this.width * ROWS_PER_UPSERT) this.flush();
  }

  /** Writes what is gathered, in statements of power-of-two row counts (so few statements are ever prepared). */
  flush(): void {
    const width = this.width;
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

/** A parted table's value columns: the cells, and on the totals the rollup entries. */
const valueColumns = (table: PartedSql) => (table.withRollup ? ["cells", "rollup"] : ["cells"]);

function upsertSql(table: PartedSql, key: readonly string[], rows: number): string {
  const cacheKey = `${table.table}|${key.length}|${rows}`;
  let sql = upsertSqlCache.get(cacheKey);
  if (!sql) {
    const columns = [...key, ...valueColumns(table)];
    const row = `(${columns.map(() => "?").join(", ")})`;
    const values = Array.from({ length: rows }, () => row).join(", ");
    const merges = valueColumns(table).map((column) => {
      const merge = column === "rollup" ? ROLLUPS.sqlFunction : table.sqlFunction;
      return `${column} = ${merge}(${column}, excluded.${column})`;
    });
    sql = `INSERT INTO ${table.table} (${columns.join(", ")}) VALUES ${values}
      ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${merges.join(", ")}`;
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
