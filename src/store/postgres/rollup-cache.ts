import { SegmentYearCache, type RollupRow } from "../rollup-cache.js";
import type { RollupByKey } from "../sqlite/segment-rollups.js";

/**
 * The segment-year rollups last read, kept per store (per process, per heavy-request thread) by
 * src/store/rollup-cache.ts; a call over 1,000 segments × a year read and decoded 2.7 MB of BLOBs
 * (hex text on the wire) that the previous call over that area had read.
 *
 * Never stale: every write of rollups bumps the country's row of `segment_counts_versions` in the same
 * transaction (YearRollupBatch.write), and each call reads that version first, then the rows it lacks; a
 * version that moved drops what the country's years kept. Read in that order, rows newer than the version
 * they are kept under are dropped by the next call, never the reverse. Nothing is kept inside a
 * transaction (its own uncommitted writes, or a rollback to come).
 */
export class PgRollupCache {
  private readonly cache: SegmentYearCache;

  constructor(maxBytes?: number) {
    this.cache = new SegmentYearCache(maxBytes);
  }

  clear(): void {
    this.cache.clear();
  }

  /**
   * The rows of `segmentIds` for each year, in segment id order then year order, through `read` for
   * those not kept; `version` reads the country's current version (before `read` runs).
   */
  async rows(
    country: string,
    segmentIds: readonly number[],
    years: readonly string[],
    inTransaction: boolean,
    version: () => Promise<number>,
    read: (segmentIds: number[]) => Promise<RollupRow[]>,
  ): Promise<[segmentId: number, year: string, rollup: RollupByKey][]> {
    const cache = inTransaction ? new SegmentYearCache() : this.cache;
    const lookup = cache.lookup(country, segmentIds, years, inTransaction ? 0 : await version());
    if (lookup.missing.length > 0) cache.keep(lookup, await read(lookup.missing));
    const found: [segmentId: number, year: string, rollup: RollupByKey][] = [];
    cache.each(lookup, (segmentId, year, rollup) => found.push([segmentId, year, rollup]));
    return found;
  }
}
