import type Database from "better-sqlite3";
import {
  SPEED_BINS,
  type CountsResultRepo,
  type SegmentMonthStats,
  type SegmentStatCell,
  type SegmentStatsQuery,
  type SegmentStatsRepo,
  type StoredCountsResult,
  type UsageRecord,
  type UsageRepo,
  type UsageTotals,
} from "../types.js";

/** SQLite caps bound parameters; query segment ids in chunks well below that. */
const ID_CHUNK = 500;

interface StatRow {
  segment_id: number;
  month: string;
  trips: number;
  speed_sum_kph: number;
  speed_count: number;
  speed_histogram: string;
  purposes: string;
  incomes: string;
}

function addCounts(into: Record<string, number>, more: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(more)) into[k] = (into[k] ?? 0) + v;
  return into;
}

function addHistogram(into: number[], more: number[]): number[] {
  for (let i = 0; i < SPEED_BINS; i++) into[i] = (into[i] ?? 0) + (more[i] ?? 0);
  return into;
}

const marks = (n: number) => new Array(n).fill("?").join(",");

export class SqliteSegmentStats implements SegmentStatsRepo {
  constructor(private readonly db: Database.Database) {}

  add(country: string, cells: SegmentStatCell[]): void {
    const find = this.db.prepare(
      `SELECT * FROM segment_stats WHERE country = ? AND segment_id = ? AND month = ? AND day_of_week = ?
       AND hour = ? AND direction = ? AND vehicle_class = ? AND source = ?`,
    );
    const put = this.db.prepare(
      `INSERT OR REPLACE INTO segment_stats (country, segment_id, month, day_of_week, hour, direction, vehicle_class,
       source, trips, speed_sum_kph, speed_count, speed_histogram, purposes, incomes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      for (const c of cells) {
        const keyValues = [
          country,
          c.segmentId,
          c.month,
          c.dayOfWeek,
          c.hour,
          c.direction,
          c.vehicleClass,
          c.source,
        ];
        const old = find.get(...keyValues) as StatRow | undefined;
        put.run(
          ...keyValues,
          (old?.trips ?? 0) + c.trips,
          (old?.speed_sum_kph ?? 0) + c.speedSumKph,
          (old?.speed_count ?? 0) + c.speedCount,
          JSON.stringify(addHistogram(old ? JSON.parse(old.speed_histogram) : [], c.speedHistogram)),
          JSON.stringify(addCounts(old ? JSON.parse(old.purposes) : {}, c.purposes)),
          JSON.stringify(addCounts(old ? JSON.parse(old.incomes) : {}, c.incomes)),
        );
      }
    })();
  }

  query(q: SegmentStatsQuery): SegmentMonthStats[] {
    const lists = [q.months, q.daysOfWeek, q.hours, q.directions, q.vehicleClasses, q.sources];
    if (q.segmentIds.length === 0 || lists.some((l) => l.length === 0)) return [];
    const sums = new Map<string, SegmentMonthStats>();
    for (let i = 0; i < q.segmentIds.length; i += ID_CHUNK) {
      const ids = q.segmentIds.slice(i, i + ID_CHUNK);
      const params = [q.country, ...ids, ...lists.flat()];
      // Totals are summed inside SQLite: one row per segment and month reaches JavaScript.
      const totals = this.db
        .prepare(
          `SELECT segment_id, month, SUM(trips) AS trips, SUM(speed_sum_kph) AS speed_sum_kph,
           SUM(speed_count) AS speed_count FROM segment_stats WHERE ${matching(ids.length, q)}
           GROUP BY segment_id, month`,
        )
        .all(...params) as StatRow[];
      for (const r of totals) sums.set(`${r.segment_id}|${r.month}`, totalsOf(r));
      if (q.details === false) continue;
      const details = this.db
        .prepare(
          `SELECT segment_id, month, speed_histogram, purposes, incomes FROM segment_stats
           WHERE ${matching(ids.length, q)}`,
        )
        .all(...params) as StatRow[];
      for (const r of details) addDetails(sums.get(`${r.segment_id}|${r.month}`)!, r);
    }
    return [...sums.values()]
      .filter((s) => s.trips > 0)
      .sort((a, b) => a.segmentId - b.segmentId || a.month.localeCompare(b.month));
  }
}

/**
 * The WHERE clause of a query. The unary + keeps the trailing filters out of the index search: as
 * index terms their IN lists multiply into one probe per combination (thousands per segment),
 * mostly for absent cells.
 */
function matching(idCount: number, q: SegmentStatsQuery): string {
  return `country = ? AND segment_id IN (${marks(idCount)})
    AND month IN (${marks(q.months.length)}) AND +day_of_week IN (${marks(q.daysOfWeek.length)})
    AND +hour IN (${marks(q.hours.length)}) AND +direction IN (${marks(q.directions.length)})
    AND +vehicle_class IN (${marks(q.vehicleClasses.length)}) AND +source IN (${marks(q.sources.length)})`;
}

function totalsOf(r: StatRow): SegmentMonthStats {
  return {
    segmentId: r.segment_id,
    month: r.month,
    trips: r.trips,
    speedSumKph: r.speed_sum_kph,
    speedCount: r.speed_count,
    speedHistogram: [],
    purposes: {},
    incomes: {},
  };
}

function addDetails(s: SegmentMonthStats, r: StatRow): void {
  addHistogram(s.speedHistogram, JSON.parse(r.speed_histogram));
  addCounts(s.purposes, JSON.parse(r.purposes));
  addCounts(s.incomes, JSON.parse(r.incomes));
}

interface ResultRow {
  request_id: string;
  org_id: string;
  kind: StoredCountsResult["kind"];
  columns: string;
  extra: string;
  page_size: number;
  total_rows: number;
  created_at: string;
  expires_at: string;
}

export class SqliteCountsResults implements CountsResultRepo {
  constructor(private readonly db: Database.Database) {}

  save(r: StoredCountsResult, pages: unknown[][][], now: string): void {
    const putPage = this.db.prepare(
      "INSERT INTO counts_result_pages (request_id, page, rows) VALUES (?, ?, ?)",
    );
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM counts_results WHERE expires_at <= ?").run(now);
      this.db
        .prepare(
          `INSERT INTO counts_results (request_id, org_id, kind, columns, extra, page_size, total_rows, created_at,
           expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
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
      pages.forEach((rows, i) => putPage.run(r.requestId, i + 1, JSON.stringify(rows)));
    })();
  }

  get(
    orgId: string,
    kind: StoredCountsResult["kind"],
    requestId: string,
    now: string,
  ): StoredCountsResult | null {
    const row = this.db
      .prepare(
        "SELECT * FROM counts_results WHERE request_id = ? AND org_id = ? AND kind = ? AND expires_at > ?",
      )
      .get(requestId, orgId, kind, now) as ResultRow | undefined;
    if (!row) return null;
    return {
      requestId: row.request_id,
      orgId: row.org_id,
      kind: row.kind,
      columns: JSON.parse(row.columns),
      extra: JSON.parse(row.extra),
      pageSize: row.page_size,
      totalRows: row.total_rows,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    };
  }

  page(requestId: string, page: number): unknown[][] | null {
    const row = this.db
      .prepare("SELECT rows FROM counts_result_pages WHERE request_id = ? AND page = ?")
      .get(requestId, page) as { rows: string } | undefined;
    return row ? JSON.parse(row.rows) : null;
  }
}

export class SqliteUsage implements UsageRepo {
  constructor(private readonly db: Database.Database) {}

  record(u: UsageRecord): void {
    this.db
      .prepare(
        "INSERT INTO counts_usage (key_id, org_id, at, segments, fields, units) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(u.keyId, u.orgId, u.at, u.segments, u.fields, u.units);
  }

  totals(orgId: string, from: string, to: string): UsageTotals[] {
    const rows = this.db
      .prepare(
        `SELECT key_id, COUNT(*) AS calls, SUM(segments) AS segments, SUM(fields) AS fields, SUM(units) AS units
         FROM counts_usage WHERE org_id = ? AND at >= ? AND at < ? GROUP BY key_id ORDER BY key_id`,
      )
      .all(orgId, from, to) as {
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
    const row = this.db
      .prepare(
        "SELECT COALESCE(SUM(units), 0) AS units FROM counts_usage WHERE key_id = ? AND at >= ? AND at < ?",
      )
      .get(keyId, from, to) as { units: number };
    return row.units;
  }

  setQuota(keyIdOrPrefix: string, units: number | null): string | null {
    const row = this.db
      .prepare("SELECT id FROM api_keys WHERE id = ? OR prefix = ?")
      .get(keyIdOrPrefix, keyIdOrPrefix) as { id: string } | undefined;
    if (!row) return null;
    this.db.prepare("UPDATE api_keys SET counts_quota_units = ? WHERE id = ?").run(units, row.id);
    return row.id;
  }

  quotaOf(keyId: string): number | null {
    const row = this.db.prepare("SELECT counts_quota_units AS q FROM api_keys WHERE id = ?").get(keyId) as
      { q: number | null } | undefined;
    return row?.q ?? null;
  }
}
