import { addDetails, addTotals, cellMask, SegmentMonthCounters } from "../sqlite/segment-month-pack.js";
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
import type { PgDb } from "./db.js";
import { cellsOfBatch, inSpeedSteps, type SegmentCellBatch } from "../../engine/counts/segment-cells.js";
import {
  addRollupMonths,
  eachRollupMonth,
  monthIndexByYear,
  monthsByYear,
  rollupKey,
} from "../sqlite/segment-rollups.js";
import { rebuildYearRollups, YearRollupBatch } from "./segment-rollups.js";
import { PgRollupCache } from "./rollup-cache.js";
import type { RollupRow } from "../rollup-cache.js";
import { toCountsResult, type CountsResultRow } from "../rows.js";
import { decodeResultPage, encodeResultPage, EXPIRED_RESULTS_PER_SAVE } from "../result-pages.js";

type PackedRow = { segment_id: number; month: string; cells: Buffer };

/**
 * Segment counts in the packed layout of segment-month-pack.ts (one totals and one details row per
 * segment × month), as in SQLite, with the same whole-month rollups per segment × year
 * (segment-rollups.ts). Adding is read-modify-write of those rows, so each segment-year is locked while
 * it is updated: two ingest workers adding to the same segment-year take turns instead of losing one's
 * counts (the year, not the month: its rollup row holds every month). The locks are transaction-scoped
 * advisory locks on LOCK_BUCKETS buckets of segment-years, taken in bucket order (no deadlock): one lock
 * per segment-year would overflow the server's lock table (max_locks_per_transaction) when one batch
 * touches thousands of them.
 */
/** Advisory lock buckets of segment-years: the most locks one add holds. */
const LOCK_BUCKETS = 256;
/**
 * The first key of the two-key advisory locks of segment counts (any constant, the same everywhere). Not
 * the segment-month locks' "SFCT" of the releases before the rollups: a process of such a release, still
 * adding while this one starts, would not keep its rollups either.
 */
const LOCK_SPACE = 0x53_46_43_59; // "SFCY"

/** The reads of a query, as named statements (PgDb.prepared): the same text whatever the selection. */
const readPacked = (table: string) =>
  `SELECT segment_id, month, cells FROM ${table}
   WHERE country = $1 AND segment_id = ANY($2::bigint[]) AND month BETWEEN $3 AND $4`;
const READ_TOTALS = readPacked("segment_month_totals");
const READ_DETAILS = readPacked("segment_month_details");
const READ_ROLLUPS = `SELECT segment_id, year, cells FROM segment_year_rollups
   WHERE country = $1 AND segment_id = ANY($2::bigint[]) AND year BETWEEN $3 AND $4`;

const READ_VERSION = "SELECT version FROM segment_counts_versions WHERE country = $1";

export class PostgresSegmentStats implements SegmentStatsRepo {
  private readonly rollups = new PgRollupCache();

  constructor(private readonly db: PgDb) {}

  /** The version of the country's rollups (0: none written yet); read before the rows it covers. */
  private async version(country: string): Promise<number> {
    const [row] = await this.db.prepared<{ version: number }>(READ_VERSION, [country]);
    return row?.version ?? 0;
  }

  async add(country: string, cells: SegmentStatCell[]): Promise<void> {
    const groups = new Map<string, SegmentStatCell[]>();
    for (const c of cells) {
      const k = `${c.segmentId}|${c.month}`;
      const group = groups.get(k);
      if (group) group.push(c);
      else groups.set(k, [c]);
    }
    if (groups.size === 0) return;
    const keys = [...groups.values()]
      .map((g) => ({ segmentId: g[0].segmentId, month: g[0].month }))
      .sort((a, b) => a.segmentId - b.segmentId || (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
    const ids = keys.map((k) => k.segmentId);
    const months = keys.map((k) => k.month);
    await this.db.transaction(async () => {
      await this.db.run(
        `SELECT pg_advisory_xact_lock($4, b) FROM (
           SELECT DISTINCT (hashtextextended($1 || '|' || s || '|' || left(m, 4), 0) % $5)::int AS b
           FROM unnest($2::bigint[], $3::text[]) AS k(s, m)) buckets ORDER BY b`,
        [country, ids, months, LOCK_SPACE, LOCK_BUCKETS],
      );
      const stored = async (table: string) => {
        const rows = await this.db.rows<PackedRow>(
          `SELECT t.segment_id, t.month, t.cells FROM ${table} t
           JOIN unnest($2::bigint[], $3::text[]) AS k(s, m) ON t.segment_id = k.s AND t.month = k.m
           WHERE t.country = $1`,
          [country, ids, months],
        );
        return new Map(rows.map((r) => [`${r.segment_id}|${r.month}`, r.cells]));
      };
      const [totals, details] = [await stored("segment_month_totals"), await stored("segment_month_details")];
      const packedTotals: Buffer[] = [];
      const packedDetails: Buffer[] = [];
      const rollups = new YearRollupBatch(country);
      for (const { segmentId, month } of keys) {
        const k = `${segmentId}|${month}`;
        const counters = SegmentMonthCounters.decode(totals.get(k), details.get(k));
        // Speed sums in whole steps of 1/1024 km/h, as ingests tally them and SQLite's store keeps them.
        for (const c of groups.get(k)!) counters.add(c, inSpeedSteps(c.speedSumKph));
        const packed = counters.encode();
        packedTotals.push(packed.totals);
        packedDetails.push(packed.details);
        rollups.set(segmentId, month, packed.totals);
      }
      const put = (table: string, blobs: Buffer[]) =>
        this.db.run(
          `INSERT INTO ${table} (country, segment_id, month, cells)
           SELECT $1, s, m, c FROM unnest($2::bigint[], $3::text[], $4::bytea[]) AS k(s, m, c)
           ON CONFLICT (country, segment_id, month) DO UPDATE SET cells = excluded.cells`,
          [country, ids, months, blobs],
        );
      await put("segment_month_totals", packedTotals);
      await put("segment_month_details", packedDetails);
      await rollups.write(async (sql, params) => await this.db.rows(sql, params));
    });
  }

  async addBatch(country: string, batch: SegmentCellBatch): Promise<void> {
    await this.add(country, cellsOfBatch(batch));
  }

  /** Nothing to tidy: each batch rewrites its segment-months and segment-years whole. */
  async compact(): Promise<void> {}

  async query(q: SegmentStatsQuery): Promise<SegmentMonthStats[]> {
    return await this.read(q, true);
  }

  async totals(q: SegmentStatsQuery): Promise<SegmentMonthColumns> {
    const months = [...new Set(q.months)].sort();
    const rollup = rollupKey(q);
    const lists = [q.months, q.daysOfWeek, q.hours, q.directions, q.vehicleClasses, q.sources];
    if (rollup === null || q.segmentIds.length === 0 || lists.some((l) => l.length === 0))
      return columnsOfStats(await this.read({ ...q, details: false }, true), months);
    const monthIndex = monthIndexByYear(months);
    const out = new SegmentMonthColumnsBuilder(months, q.segmentIds.length * months.length);
    for (const [segmentId, year, r] of await this.rollupRows(q.country, q.segmentIds, [...monthIndex.keys()]))
      addRollupMonths(r, rollup, segmentId, monthIndex.get(year)!, out);
    return out.done();
  }

  /** The segment-years' rollups, through the cache, in segment id order then year order. */
  private async rollupRows(country: string, segmentIds: readonly number[], years: readonly string[]) {
    const read = async (ids: number[]) =>
      (
        await this.db.prepared<{ segment_id: number; year: string; cells: Buffer }>(READ_ROLLUPS, [
          country,
          ids,
          years[0],
          years[years.length - 1],
        ])
      ).map((r): RollupRow => [r.segment_id, r.year, r.cells]);
    const version = () => this.version(country);
    return await this.rollups.rows(country, segmentIds, years, this.db.inTransaction, version, read);
  }

  /** The query answered from the cells, never from the rollups (for tests that compare the two paths). */
  async queryCells(q: SegmentStatsQuery): Promise<SegmentMonthStats[]> {
    return await this.read(q, false);
  }

  /** Every rollup computed again from the month totals (after packed rows were copied in as they are). */
  async rebuildYearRollups(): Promise<void> {
    const client = await this.db.pool.connect();
    try {
      await rebuildYearRollups(client);
    } finally {
      client.release();
    }
  }

  private async read(q: SegmentStatsQuery, useRollups: boolean): Promise<SegmentMonthStats[]> {
    const lists = [q.months, q.daysOfWeek, q.hours, q.directions, q.vehicleClasses, q.sources];
    if (q.segmentIds.length === 0 || lists.some((l) => l.length === 0)) return [];
    const mask = cellMask(q);
    const months = [...new Set(q.months)].sort();
    const wanted = new Set(months);
    // Months asked are one or twelve in a row: the range is read and the exact list checked here.
    const params = [q.country, q.segmentIds, months[0], months[months.length - 1]];
    const rollup = useRollups ? rollupKey(q) : null;
    // Whole days of the whole week: the precomputed rollups (details, when asked, still from the cells).
    const [fromRollups, totals, details] = await Promise.all([
      rollup !== null ? this.fromRollups(q, rollup, months) : [],
      rollup === null ? this.db.prepared<PackedRow>(READ_TOTALS, params) : null,
      q.details !== false ? this.db.prepared<PackedRow>(READ_DETAILS, params) : null,
    ]);
    const found: SegmentMonthStats[] = fromRollups;
    for (const { segment_id, month, cells } of totals ?? []) {
      if (!wanted.has(month)) continue;
      const stats = emptySegmentMonth(segment_id, month);
      addTotals(cells, mask, stats);
      if (stats.trips > 0) found.push(stats);
    }
    if (details && found.length > 0) {
      const byKey = new Map(found.map((s) => [`${s.segmentId}|${s.month}`, s]));
      for (const { segment_id, month, cells } of details) {
        const stats = byKey.get(`${segment_id}|${month}`);
        if (stats) addDetails(cells, mask, stats);
      }
    }
    return found.sort(bySegmentAndMonth);
  }

  /** The asked months (sorted YYYY-MM) with trips, from the segment-years' rollups. */
  private async fromRollups(
    q: SegmentStatsQuery,
    key: number,
    months: string[],
  ): Promise<SegmentMonthStats[]> {
    const wanted = monthsByYear(months);
    const rows = await this.rollupRows(q.country, q.segmentIds, [...wanted.keys()]);
    const found: SegmentMonthStats[] = [];
    for (const [segmentId, year, rollup] of rows) {
      const asked = wanted.get(year);
      if (!asked) continue;
      eachRollupMonth(rollup, key, asked, (month, trips, speedCount, speedSumKph) =>
        found.push({
          ...emptySegmentMonth(segmentId, month),
          trips,
          speedSumKph,
          speedCount,
        }),
      );
    }
    return found;
  }
}

const bySegmentAndMonth = (a: SegmentMonthStats, b: SegmentMonthStats) =>
  a.segmentId - b.segmentId || (a.month < b.month ? -1 : a.month > b.month ? 1 : 0);

/** Counts paging state in the shared database: any API process serves any page. */
export class PostgresCountsResults implements CountsResultRepo {
  constructor(private readonly db: PgDb) {}

  async save(r: StoredCountsResult, pages: readonly ResultPageRows[], now: string): Promise<void> {
    await this.db.transaction(async () => {
      // Pages go with their result (ON DELETE CASCADE).
      await this.db.run(
        `DELETE FROM counts_results WHERE request_id IN
           (SELECT request_id FROM counts_results WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
        [now, EXPIRED_RESULTS_PER_SAVE],
      );
      await this.db.run(
        `INSERT INTO counts_results (request_id, org_id, kind, columns, extra, page_size, total_rows, created_at,
           expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          r.requestId,
          r.orgId,
          r.kind,
          JSON.stringify(r.columns),
          JSON.stringify(r.extra),
          r.pageSize,
          r.totalRows,
          r.createdAt,
          r.expiresAt,
        ],
      );
      if (pages.length > 0)
        await this.db.run(
          `INSERT INTO counts_result_pages (request_id, page, cells)
           SELECT $1, n, p FROM unnest($2::bytea[]) WITH ORDINALITY AS x(p, n)`,
          [r.requestId, pages.map((page) => encodeResultPage(page))],
        );
    });
  }

  async get(
    orgId: string,
    kind: StoredCountsResult["kind"],
    requestId: string,
    now: string,
  ): Promise<StoredCountsResult | null> {
    const row = await this.db.row<CountsResultRow>(
      "SELECT * FROM counts_results WHERE request_id = $1 AND org_id = $2 AND kind = $3 AND expires_at > $4",
      [requestId, orgId, kind, now],
    );
    if (!row) return null;
    return toCountsResult(row);
  }

  async page(requestId: string, page: number): Promise<unknown[][] | null> {
    const row = await this.db.row<{ cells: Buffer }>(
      "SELECT cells FROM counts_result_pages WHERE request_id = $1 AND page = $2",
      [requestId, page],
    );
    return row ? decodeResultPage(row.cells) : null;
  }
}

/** Metering in the shared database: quotas hold across every API process. */
export class PostgresUsage implements UsageRepo {
  constructor(private readonly db: PgDb) {}

  async record(u: UsageRecord): Promise<void> {
    await this.db.run(
      "INSERT INTO counts_usage (key_id, org_id, at, segments, fields, units) VALUES ($1, $2, $3, $4, $5, $6)",
      [u.keyId, u.orgId, u.at, u.segments, u.fields, u.units],
    );
  }

  async totals(orgId: string, from: string, to: string): Promise<UsageTotals[]> {
    const rows = await this.db.rows<{
      key_id: string;
      calls: number;
      segments: number;
      fields: number;
      units: number;
    }>(
      `SELECT key_id, COUNT(*) AS calls, SUM(segments) AS segments, SUM(fields) AS fields, SUM(units) AS units
       FROM counts_usage WHERE org_id = $1 AND at >= $2 AND at < $3 GROUP BY key_id ORDER BY key_id`,
      [orgId, from, to],
    );
    return rows.map((r) => ({
      keyId: r.key_id,
      calls: r.calls,
      segments: r.segments,
      fields: r.fields,
      units: r.units,
    }));
  }

  async unitsOfKey(keyId: string, from: string, to: string): Promise<number> {
    const row = await this.db.row<{ units: number }>(
      "SELECT COALESCE(SUM(units), 0) AS units FROM counts_usage WHERE key_id = $1 AND at >= $2 AND at < $3",
      [keyId, from, to],
    );
    return row!.units;
  }

  async setQuota(keyIdOrPrefix: string, units: number | null): Promise<string | null> {
    const row = await this.db.row<{ id: string }>(
      `UPDATE api_keys SET counts_quota_units = $2
       WHERE id = (SELECT id FROM api_keys WHERE id = $1 OR prefix = $1 LIMIT 1) RETURNING id`,
      [keyIdOrPrefix, units],
    );
    return row?.id ?? null;
  }

  async quotaOf(keyId: string): Promise<number | null> {
    const row = await this.db.row<{ q: number | null }>(
      "SELECT counts_quota_units AS q FROM api_keys WHERE id = $1",
      [keyId],
    );
    return row?.q ?? null;
  }
}
