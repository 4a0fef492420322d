import type Database from "better-sqlite3";
import { SegmentYearCache, type RollupRow } from "../rollup-cache.js";
import type { RollupByKey } from "./segment-rollups.js";

/**
 * The segment-year rollups last read, kept per connection (src/store/rollup-cache.ts), never stale:
 * every write of the tallies bumps the country's row of `segment_counts_versions` in its transaction
 * (as on PostgreSQL), whichever connection or process writes, and this connection's own writes also
 * call `clear`. Not `PRAGMA data_version`: that moves on any commit of another connection, and API
 * processes (and heavy-request threads) commit a counts result and its metering on every call, so each
 * one's calls emptied the others' caches (2 processes on one file answered less than 1; docs/performance.md,
 * "Heavy-request threads on PostgreSQL, rollup caches on SQLite"). Nothing is kept while a transaction is
 * open, so a rolled-back write cannot leave its rows here.
 */
export class RollupCache {
  private readonly cache: SegmentYearCache;
  private readonly countsVersion: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    maxBytes?: number,
  ) {
    this.cache = new SegmentYearCache(maxBytes);
    this.countsVersion = db.prepare("SELECT version FROM segment_counts_versions WHERE country = ?").pluck();
  }

  clear(): void {
    this.cache.clear();
  }

  /**
   * The rows of `segmentIds` for each year, through `read` for those not kept; `found` gets them in
   * segment id order, then year order.
   */
  each(
    country: string,
    segmentIds: readonly number[],
    years: readonly string[],
    read: (segmentIds: number[], years: readonly string[]) => RollupRow[],
    found: (segmentId: number, year: string, rollup: RollupByKey) => void,
  ): void {
    // Inside a transaction: a cache of this call only, dropped after it.
    const cache = this.db.inTransaction ? new SegmentYearCache() : this.cache;
    const lookup = cache.lookup(
      country,
      segmentIds,
      years,
      (this.countsVersion.get(country) as number | undefined) ?? 0,
    );
    if (lookup.missing.length > 0) cache.keep(lookup, read(lookup.missing, years));
    cache.each(lookup, found);
  }
}
