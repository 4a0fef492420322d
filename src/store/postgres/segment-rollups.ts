import type pg from "pg";
import { ChangedYears, replaceMonths } from "../sqlite/segment-rollups.js";

/**
 * The whole-month rollups of the PostgreSQL store: the BLOBs of src/store/sqlite/segment-rollups.ts
 * (the same functions compute them, so an answer from them is bit for bit the cells path's), one row
 * per segment × year in `segment_year_rollups`, kept at ingest (PostgresSegmentStats.add, under the
 * segment-year's lock) and computed from the month totals by the migration that adds the table. Every
 * write bumps the country's version (`segment_counts_versions`), so copies kept in memory are never stale.
 */

/** Runs one statement: a PgDb's `rows`, or a migrating connection's query. */
export type Rows = <R>(sql: string, params: unknown[]) => Promise<R[]>;

/** The new months of the segment-years an add touched, each year written once. */
export class YearRollupBatch extends ChangedYears {
  /** Each segment-year's stored rollup with the new months replaced, and the country's version bumped. */
  async write(rows: Rows): Promise<void> {
    if (this.years.size === 0) return;
    const entries = [...this.years.values()];
    const ids = entries.map((e) => e.segmentId);
    const years = entries.map((e) => e.year);
    const stored = await rows<{ segment_id: number; year: string; cells: Buffer }>(
      `SELECT r.segment_id, r.year, r.cells FROM segment_year_rollups r
       JOIN unnest($2::bigint[], $3::text[]) AS k(s, y) ON r.segment_id = k.s AND r.year = k.y
       WHERE r.country = $1`,
      [this.country, ids, years],
    );
    const before = new Map(stored.map((r) => [`${r.segment_id}|${r.year}`, r.cells]));
    const blobs = entries.map((e) => replaceMonths(before.get(`${e.segmentId}|${e.year}`), e.months));
    await rows(
      `INSERT INTO segment_year_rollups (country, segment_id, year, cells)
       SELECT $1, s, y, c FROM unnest($2::bigint[], $3::text[], $4::bytea[]) AS k(s, y, c)
       ON CONFLICT (country, segment_id, year) DO UPDATE SET cells = excluded.cells`,
      [this.country, ids, years, blobs],
    );
    // In the same transaction: a process that kept the former rollups in memory drops them (rollup-cache.ts).
    await rows(
      `INSERT INTO segment_counts_versions (country, version) VALUES ($1, 1)
       ON CONFLICT (country) DO UPDATE SET version = segment_counts_versions.version + 1`,
      [this.country],
    );
    this.years.clear();
  }
}

/** Totals rows read per batch while rebuilding. */
const REBUILD_BATCH = 2_000;

/**
 * Every segment-year's rollup computed again from the month totals, in key order and in batches (a
 * segment-year split across two batches is rewritten with its later months added). The migration runs it
 * on the tables as they are; an import that copies packed totals in runs it afterwards.
 */
export async function rebuildYearRollups(client: pg.ClientBase): Promise<void> {
  const rows: Rows = async <R>(sql: string, params: unknown[]) =>
    (await client.query(sql, params)).rows as R[];
  let after: [string, number, string] = ["", -1, ""];
  for (;;) {
    const batch = await rows<{ country: string; segment_id: number; month: string; cells: Buffer }>(
      `SELECT country, segment_id, month, cells FROM segment_month_totals
       WHERE (country, segment_id, month) > ($1, $2, $3) ORDER BY country, segment_id, month LIMIT $4`,
      [...after, REBUILD_BATCH],
    );
    if (batch.length === 0) return;
    let rollups: YearRollupBatch | undefined;
    for (const { country, segment_id, month, cells } of batch) {
      if (rollups?.country !== country) {
        await rollups?.write(rows);
        rollups = new YearRollupBatch(country);
      }
      rollups.set(Number(segment_id), month, cells);
    }
    await rollups?.write(rows);
    const last = batch[batch.length - 1];
    after = [last.country, Number(last.segment_id), last.month];
  }
}
