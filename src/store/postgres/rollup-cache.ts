import { aligned } from "../sqlite/segment-month-pack.js";

/** A rollup row as read: segment id, year, BLOB. */
export type RollupRow = { segment_id: number; year: string; cells: Uint8Array };

/**
 * The segment-year rollup BLOBs last read, kept per store (per process, per heavy-request thread), as
 * src/store/sqlite/rollup-cache.ts does for SQLite: a metrics call over 1,000 segments × a year read and
 * decoded 2.7 MB of BLOBs (hex text on the wire) that the previous call over that area had read. Absent
 * rows are remembered too.
 *
 * Never stale: every write of rollups bumps the country's row of `segment_counts_versions` in the same
 * transaction (YearRollupBatch.write), and each call reads that version first, then the rows it lacks; a
 * version that moved drops what the country's years kept. Read in that order, rows newer than the version
 * they are kept under are dropped by the next call, never the reverse. Nothing is kept inside a
 * transaction. Bounded by `maxBytes`: past it the cache starts over.
 */
export class PgRollupCache {
  /** country|year → segment id → BLOB (8-byte aligned) or null when the segment has no row. */
  private readonly years = new Map<string, Map<number, Uint8Array | null>>();
  private readonly versions = new Map<string, number>();
  private bytes = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  /**
   * The rows of `segmentIds` for each year, through `read` for those not kept; `version` is the
   * country's current version (read before `read` runs).
   */
  async rows(
    country: string,
    segmentIds: readonly number[],
    years: readonly string[],
    version: number,
    read: (segmentIds: number[]) => Promise<RollupRow[]>,
  ): Promise<RollupRow[]> {
    if (this.versions.get(country) !== version) {
      this.forget(country);
      this.versions.set(country, version);
    }
    const kept = years.map((year) => this.yearOf(country, year));
    const ids = [...new Set(segmentIds)];
    const missing = ids.filter((id) => kept.some((byId) => !byId.has(id)));
    if (missing.length > 0) {
      for (const { segment_id, year, cells } of await read(missing)) {
        const byId = kept[years.indexOf(year)];
        if (!byId) continue;
        const blob = aligned(cells);
        byId.set(segment_id, blob);
        this.bytes += blob.byteLength + 32;
      }
      for (const byId of kept) for (const id of missing) if (!byId.has(id)) byId.set(id, null);
    }
    const found: RollupRow[] = [];
    for (const id of ids)
      for (let y = 0; y < years.length; y++) {
        const cells = kept[y].get(id);
        if (cells) found.push({ segment_id: id, year: years[y], cells });
      }
    if (this.bytes > this.maxBytes) this.clear();
    return found;
  }

  clear(): void {
    this.years.clear();
    this.versions.clear();
    this.bytes = 0;
  }

  private forget(country: string): void {
    for (const [key, byId] of this.years)
      if (key.startsWith(`${country}|`)) {
        for (const blob of byId.values()) if (blob) this.bytes -= blob.byteLength + 32;
        this.years.delete(key);
      }
  }

  private yearOf(country: string, year: string): Map<number, Uint8Array | null> {
    const key = `${country}|${year}`;
    let byId = this.years.get(key);
    if (!byId) this.years.set(key, (byId = new Map()));
    return byId;
  }
}
