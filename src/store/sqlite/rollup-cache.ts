import type Database from "better-sqlite3";
import { SegmentYearCache, type RollupRow } from "../rollup-cache.js";
import type { RollupByKey } from "./segment-rollups.js";

/**
 * The segment-year rollups last read, kept per connection (src/store/rollup-cache.ts), never stale:
 * `PRAGMA data_version` changes when another connection (an ingest worker thread, another process)
 * commits, and this connection's own writes to the rollups call `clear`. Nothing is kept while a
 * transaction is open, so a rolled-back write cannot leave its rows here.
 */
export class RollupCache {
  private readonly cache: SegmentYearCache;
  private readonly dataVersion: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    maxBytes?: number,
  ) {
    this.cache = new SegmentYearCache(maxBytes);
    this.dataVersion = db.prepare("PRAGMA data_version").pluck();
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
    const lookup = cache.lookup(country, segmentIds, years, this.dataVersion.get() as number);
    if (lookup.missing.length > 0) cache.keep(lookup, read(lookup.missing, years));
    cache.each(lookup, found);
  }
}
