import type Database from "better-sqlite3";
import { aligned } from "./segment-month-pack.js";

/**
 * The segment-year rollup BLOBs (segment-rollups.ts) last read, kept per connection: a metrics call
 * over 1,000 segments spent half its store time having SQLite find and copy the same 1,000 rows of
 * ~3 KB that the previous call over that area read. Absent rows are remembered too (segments
 * without counts).
 *
 * Never stale: `PRAGMA data_version` changes when another connection (an ingest worker thread,
 * another process) commits, and this connection's own writes to the rollups call `clear`. Nothing is
 * kept while a transaction is open, so a rolled-back write cannot leave its rows here. Bounded by
 * `maxBytes`: past it the cache starts over.
 */
export class RollupCache {
  /** country|year → segment id → BLOB (8-byte aligned) or null when the segment has no row. */
  private readonly years = new Map<string, Map<number, Uint8Array | null>>();
  private bytes = 0;
  private version = -1;
  private readonly dataVersion: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {
    this.dataVersion = db.prepare("PRAGMA data_version").pluck();
  }

  clear(): void {
    this.years.clear();
    this.bytes = 0;
  }

  /**
   * The rows of `segmentIds` (ascending) for each year, through `read` for those not kept; `found`
   * gets them in segment id order, then year order.
   */
  each(
    country: string,
    segmentIds: readonly number[],
    years: readonly string[],
    read: (segmentIds: number[], years: readonly string[]) => [number, string, Uint8Array][],
    found: (segmentId: number, year: string, cells: Uint8Array) => void,
  ): void {
    const ids = ascendingUnique(segmentIds);
    if (this.db.inTransaction) return eachUncached(ids, years, read(ids, years), found);
    const version = this.dataVersion.get() as number;
    if (version !== this.version) {
      this.clear();
      this.version = version;
    }
    const kept = years.map((year) => this.yearOf(country, year));
    const missing = ids.filter((id) => kept.some((byId) => !byId.has(id)));
    if (missing.length > 0) {
      for (const [segmentId, year, cells] of read(missing, years)) {
        const byId = kept[years.indexOf(year)];
        if (!byId) continue;
        const blob = aligned(cells);
        byId.set(segmentId, blob);
        this.bytes += blob.byteLength + 32;
      }
      for (const byId of kept) for (const id of missing) if (!byId.has(id)) byId.set(id, null);
    }
    for (const id of ids)
      for (let y = 0; y < years.length; y++) {
        const cells = kept[y].get(id);
        if (cells) found(id, years[y], cells);
      }
    if (this.bytes > this.maxBytes) this.clear();
  }

  private yearOf(country: string, year: string): Map<number, Uint8Array | null> {
    const key = `${country}|${year}`;
    let byId = this.years.get(key);
    if (!byId) this.years.set(key, (byId = new Map()));
    return byId;
  }
}

function ascendingUnique(ids: readonly number[]): number[] {
  const sorted = [...ids].sort((a, b) => a - b);
  return sorted.filter((id, i) => i === 0 || id !== sorted[i - 1]);
}

/** Inside a transaction: the rows just read, in the same order, none kept. */
function eachUncached(
  ids: number[],
  years: readonly string[],
  rows: [number, string, Uint8Array][],
  found: (segmentId: number, year: string, cells: Uint8Array) => void,
): void {
  const read = new Map(rows.map(([id, year, cells]) => [`${id}|${year}`, cells]));
  for (const id of ids)
    for (const year of years) {
      const cells = read.get(`${id}|${year}`);
      if (cells) found(id, year, cells);
    }
}
