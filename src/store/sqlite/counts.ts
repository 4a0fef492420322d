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
  SegmentMonthCounters,
} from "./segment-month-pack.js";
import type { SegmentCellBatch } from "../../engine/counts/segment-cells.js";
import {
  addRollupMonths,
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

/** The statements of a packed table; totals and details have the same shape. */
const packedSql = (table: string) => ({
  table,
  // The selection's ids travel as one JSON array, so one prepared statement serves any size;
  // SQLite probes the key once per id. Months asked are one or twelve in a row: the range is
  // read and the exact list checked in JS.
  read: `SELECT segment_id, month, cells FROM ${table}
         WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND month BETWEEN ? AND ?`,
});
type PackedSql = ReturnType<typeof packedSql>;
const TOTALS = packedSql("segment_month_totals");
const DETAILS = packedSql("segment_month_details");
/** Whole-month rollups (segment-rollups.ts): one row per segment × year. */
const ROLLUPS = {
  table: "segment_year_rollups",
  read: `SELECT segment_id, year, cells FROM segment_year_rollups
         WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND year BETWEEN ? AND ?`,
};

type PackedRow = [segmentId: number, month: string, cells: Buffer];

const BUMP_COUNTS_VERSION = `INSERT INTO segment_counts_versions (country, version) VALUES (?, 1)
  ON CONFLICT (country) DO UPDATE SET version = version + 1`;

/**
 * SQLite's page cache while a batch's tallies are written, in KiB. A batch reads the stored BLOBs of every
 * segment-month it touches, then writes them back: in better-sqlite3's default 16 MB cache the pages read were
 * evicted before their rows were written. Daily ingests into a month of Monaco (28 MB of tallies by its end) stored
 * 15-20 % faster late in the month with 64 MB, held only for the batch (docs/performance.md, "Stop 49").
 */
const BATCH_PAGE_CACHE_KIB = 65_536;

/** Segment counts in the packed layout of segment-month-pack.ts: one row per segment × month. */
export class SqliteSegmentStats implements Sync<SegmentStatsRepo> {
  private readonly sql: (sql: string) => Database.Statement;
  private readonly rollups: RollupCache;

  constructor(private readonly db: Database.Database) {
    this.sql = statementCache(db);
    this.rollups = new RollupCache(db);
  }

  /** Each segment-month the cells touch is read, added to and written back once. */
  add(country: string, cells: SegmentStatCell[]): void {
    this.addGroups(country, new CellGroups(cells), new BlobArena());
  }

  addBatch(country: string, batch: SegmentCellBatch): void {
    const arena = new BlobArena();
    this.addGroups(country, new BatchGroups(batch, arena), arena);
  }

  /**
   * The groups' segment-months read, updated and written back, with their year rollups. A batch touches
   * nearly every segment of its month: the stored rows are read in one query per month and table, and
   * written ROWS_PER_UPSERT at a time; a statement per segment-month and table cost more than the merge.
   */
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
    const totals = storedByPeriod(this.sql(TOTALS.read), country, keys);
    const details = storedByPeriod(this.sql(DETAILS.read), country, keys);
    const rollups = new YearRollups(country, arena);
    const putTotals = new RowUpserts(this.sql, TOTALS.table, "month");
    const putDetails = new RowUpserts(this.sql, DETAILS.table, "month");
    for (let i = 0; i < keys.length; i++) {
      const [segmentId, month] = keys[i];
      const packed = groups.merge(i, totals.get(month)?.get(segmentId), details.get(month)?.get(segmentId));
      putTotals.add(country, segmentId, month, packed.totals);
      putDetails.add(country, segmentId, month, packed.details);
      rollups.set(segmentId, month, packed.totals);
    }
    putTotals.flush();
    putDetails.flush();
    rollups.write(this.sql);
    // In the same transaction: every connection that kept the former rollups drops them (rollup-cache.ts).
    this.sql(BUMP_COUNTS_VERSION).run(country);
    this.rollups.clear();
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
    return (segmentIds: number[], years: readonly string[]) =>
      this.sql(ROLLUPS.read)
        .raw()
        .all(country, JSON.stringify(segmentIds), years[0], years[years.length - 1]) as [
        number,
        string,
        Buffer,
      ][];
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
    const read = (table: PackedSql) =>
      this.sql(table.read)
        .raw()
        .all(q.country, JSON.stringify(q.segmentIds), months[0], months[months.length - 1]) as PackedRow[];
    // Whole days of the whole week: the precomputed rollups, else the months' cells.
    const rollup = useRollups ? rollupKey(q) : null;
    // Not push(...rows): a year is 12,000 arguments.
    const found: SegmentMonthStats[] = rollup !== null ? this.fromRollups(q, rollup, months) : [];
    if (rollup === null) {
      const cellsAsked = mask();
      for (const [segmentId, month, cells] of read(TOTALS)) {
        if (!wanted.has(month)) continue;
        const stats = emptySegmentMonth(segmentId, month);
        addTotals(cells, cellsAsked, stats);
        if (stats.trips > 0) found.push(stats);
      }
    }
    if (q.details !== false && found.length > 0) {
      const byKey = new Map(found.map((s) => [`${s.segmentId}|${s.month}`, s]));
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

/** Segment-months to add to: each one's key, and its stored packed rows merged with what it adds. */
interface SegmentMonthGroups {
  readonly count: number;
  key(i: number): [segmentId: number, month: string];
  merge(i: number, totals?: Buffer, details?: Buffer): { totals: Buffer; details: Buffer };
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

  merge(i: number, totals?: Buffer, details?: Buffer): { totals: Buffer; details: Buffer } {
    const counters = SegmentMonthCounters.decode(totals, details);
    for (const c of this.groups[i]) counters.add(c);
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

  merge(g: number, totals?: Buffer, details?: Buffer): { totals: Buffer; details: Buffer } {
    return this.packer.merge(g, totals, details);
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

/** The rollups of the segment-years a batch touched: new months gathered, each year written once. */
export class YearRollups extends ChangedYears {
  /** The changed segment-years written: stored rows read in one query per year, written in multi-row upserts. */
  write(sql: (sql: string) => Database.Statement): void {
    const keys = [...this.years.values()].map(({ segmentId, year }) => [segmentId, year] as [number, string]);
    const stored = storedByPeriod(sql(ROLLUPS.read), this.country, keys);
    const put = new RowUpserts(sql, ROLLUPS.table, "year");
    for (const { segmentId, year, months } of this.years.values())
      put.add(this.country, segmentId, year, this.replaceMonths(stored.get(year)?.get(segmentId), months));
    put.flush();
    this.years.clear();
  }
}

/**
 * The stored rows of these (segment, month or year) keys, by period and segment id: one query per period
 * (`read` takes country, ids as JSON, first and last period), each segment's key probed once.
 */
function storedByPeriod(
  read: Database.Statement,
  country: string,
  keys: readonly [segmentId: number, period: string][],
): Map<string, Map<number, Buffer>> {
  const idsByPeriod = new Map<string, number[]>();
  for (const [segmentId, period] of keys) {
    let ids = idsByPeriod.get(period);
    if (!ids) idsByPeriod.set(period, (ids = []));
    ids.push(segmentId);
  }
  const found = new Map<string, Map<number, Buffer>>();
  for (const [period, ids] of idsByPeriod) {
    const rows = read.raw().all(country, JSON.stringify(ids), period, period) as PackedRow[];
    found.set(period, new Map(rows.map(([segmentId, , cells]) => [segmentId, cells])));
  }
  return found;
}

/** Rows per multi-row upsert (a power of two): 4 parameters each, far below SQLite's limit of 32,766. */
const ROWS_PER_UPSERT = 256;

/**
 * Upserts of packed rows (country, segment_id, period, cells) gathered and written ROWS_PER_UPSERT per
 * statement: one statement per row cost ~2 µs of overhead each, ~15,000 times for a 4,000-trip batch.
 */
class RowUpserts {
  private params: unknown[] = [];

  constructor(
    private readonly sql: (sql: string) => Database.Statement,
    private readonly table: string,
    private readonly period: "month" | "year",
  ) {}

  add(country: string, segmentId: number, period: string, cells: Buffer): void {
    this.params.push(country, segmentId, period, cells);
    if (this.params.length === 4 * ROWS_PER_UPSERT) this.flush();
  }

  /** Writes what is gathered, in statements of power-of-two row counts (so few statements are ever prepared). */
  flush(): void {
    let from = 0;
    for (let rows = ROWS_PER_UPSERT; rows >= 1; rows >>= 1)
      for (; 4 * (from + rows) <= this.params.length; from += rows)
        this.sql(upsertSql(this.table, this.period, rows)).run(
          this.params.slice(4 * from, 4 * (from + rows)),
        );
    this.params = [];
  }
}

const upsertSqlCache = new Map<string, string>();

function upsertSql(table: string, period: string, rows: number): string {
  const key = `${table}|${rows}`;
  let sql = upsertSqlCache.get(key);
  if (!sql) {
    const values = Array.from({ length: rows }, () => "(?, ?, ?, ?)").join(", ");
    sql = `INSERT INTO ${table} (country, segment_id, ${period}, cells) VALUES ${values}
      ON CONFLICT (country, segment_id, ${period}) DO UPDATE SET cells = excluded.cells`;
    upsertSqlCache.set(key, sql);
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
