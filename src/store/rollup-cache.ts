import { rollupByKey, rollupBytes, type RollupByKey } from "./sqlite/segment-rollups.js";

/** A rollup row as read: segment id, year, BLOB. */
export type RollupRow = [segmentId: number, year: string, cells: Uint8Array];

/** What a kept segment-year costs: its decoded buffer, the map entry and the six column views. */
const keptBytes = (rollup: RollupByKey) => rollupBytes(rollup) + 512;

/** One look-up in progress: what is kept for each asked year and the segments still to read. */
export interface RollupLookup {
  readonly ids: Float64Array;
  readonly years: readonly string[];
  readonly kept: Map<number, RollupByKey | null>[];
  /** Segments lacking a year: read them and hand the rows to `keep`. */
  readonly missing: number[];
}

/**
 * The segment-year rollup BLOBs (segment-rollups.ts) last read, shared by the SQLite and PostgreSQL
 * stores: a metrics call over 1,000 segments spent much of its store time reading again the same rows
 * of ~3 KB that the previous call over that area read. Rows are kept decoded, grouped by key
 * (rollupByKey); absent rows are remembered too (segments without counts). Each store plugs in its own
 * invalidation as the `version` handed to `lookup` (SQLite's `PRAGMA data_version`, PostgreSQL's row of
 * `segment_counts_versions`): a country's years are dropped
 * when it moves. Reading is split in steps (lookup, keep, each) so that the synchronous and the
 * asynchronous store both drive it. Bounded by `maxBytes`: past it the cache starts over.
 */
export class SegmentYearCache {
  /** country|year → segment id → its rollup's columns, or null when the segment has no row. */
  private readonly years = new Map<string, Map<number, RollupByKey | null>>();
  private readonly versions = new Map<string, number>();
  private bytes = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  clear(): void {
    this.years.clear();
    this.versions.clear();
    this.bytes = 0;
  }

  /** What is kept of `segmentIds` (ascending, once each) for `years`, the country at `version`. */
  lookup(
    country: string,
    segmentIds: readonly number[],
    years: readonly string[],
    version: number,
  ): RollupLookup {
    if (this.versions.get(country) !== version) {
      this.forget(country);
      this.versions.set(country, version);
    }
    const ids = ascendingUnique(segmentIds);
    const kept = years.map((year) => this.yearOf(country, year));
    const missing: number[] = [];
    for (const id of ids)
      for (const byId of kept)
        if (!byId.has(id)) {
          missing.push(id);
          break;
        }
    return { ids, years, kept, missing };
  }

  /** The rows read for `lookup.missing`; the segment-years without a row are kept as absent. */
  keep(lookup: RollupLookup, rows: Iterable<RollupRow>): void {
    const { years, kept, missing } = lookup;
    for (const [segmentId, year, cells] of rows) {
      const byId = kept[years.indexOf(year)];
      if (!byId) continue;
      const rollup = rollupByKey(cells);
      byId.set(segmentId, rollup);
      this.bytes += keptBytes(rollup);
    }
    for (const byId of kept) for (const id of missing) if (!byId.has(id)) byId.set(id, null);
  }

  /** The rows of the look-up, in segment id order, then year order; then the budget is checked. */
  each(lookup: RollupLookup, found: (segmentId: number, year: string, rollup: RollupByKey) => void): void {
    const { ids, years, kept } = lookup;
    for (const id of ids)
      for (let y = 0; y < years.length; y++) {
        const cells = kept[y].get(id);
        if (cells) found(id, years[y], cells);
      }
    if (this.bytes > this.maxBytes) this.clear();
  }

  private forget(country: string): void {
    for (const [key, byId] of this.years)
      if (key.startsWith(`${country}|`)) {
        for (const rollup of byId.values()) if (rollup) this.bytes -= keptBytes(rollup);
        this.years.delete(key);
      }
  }

  private yearOf(country: string, year: string): Map<number, RollupByKey | null> {
    const key = `${country}|${year}`;
    let byId = this.years.get(key);
    if (!byId) this.years.set(key, (byId = new Map()));
    return byId;
  }
}

/** A typed array sorts numbers natively, without a comparator call per pair. */
function ascendingUnique(ids: readonly number[]): Float64Array {
  const sorted = Float64Array.from(ids).sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i];
  return sorted.subarray(0, n);
}
