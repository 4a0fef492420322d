import { CHUNK_FORMAT, decodeChunk as decodeColumns, encodeChunk } from "../engine/trips/chunk-format.js";
import {
  concatColumns,
  selectTrips,
  sourceCode,
  tripsToColumns,
  vehicleClassCode,
  type TripColumns,
} from "../engine/trips/columns.js";
import type { MatchedTrip } from "../engine/trips/types.js";
import { monthBefore, monthKey } from "../engine/time.js";
import type { TripScanOptions } from "../app/ports/store.js";

/**
 * The stored trip chunk row, the same in every backend (SQLite BLOB, PostgreSQL bytea): the columns of
 * up to MAX_CHUNK_TRIPS trips of one country and month (chunk-format.ts), with the row fields scans
 * filter on.
 */

/**
 * Upper bound of trips per chunk: big enough for fast scans, small enough to decode in one go, and to
 * stay well under 32 MB (about 1,600 bytes a trip of 90 road segments: ~16 MB). glibc's malloc serves a
 * block of 32 MB or more with a fresh mmap every time, whose every page faults on first touch: a
 * PostgreSQL backend detoasting 50,000-trip chunks (52 MB each) spent 13.6-16.6 s on 1,000,000 trips
 * against 1.2-1.4 s for the same bytes in 10 MB values (docs/performance.md); Node's buffers pay alike.
 */
export const MAX_CHUNK_TRIPS = 10_000;

export interface ChunkRow {
  format: number;
  trip_count: number;
  step_count: number;
  class_mask: number;
  devices: string;
  columns: Buffer;
}

/** The stored row of a chunk of trips. */
export function chunkRowOf(trips: readonly MatchedTrip[]): ChunkRow {
  return chunkRowOfColumns(tripsToColumns(trips));
}

/** The stored row of a chunk of trips already in columns. */
export function chunkRowOfColumns(cols: TripColumns): ChunkRow {
  return {
    format: CHUNK_FORMAT,
    trip_count: cols.count,
    step_count: cols.pathStart[cols.count],
    class_mask: cols.vehicleClass.reduce((m, c) => m | (1 << c), 0),
    devices: JSON.stringify(cols.devices),
    columns: asBuffer(encodeChunk(cols)),
  };
}

/** Stored chunks as one row, their trips in the order given (compaction). */
export function mergedChunkRow(rows: readonly ChunkRow[]): ChunkRow {
  return chunkRowOfColumns(concatColumns(rows.map(decodeChunk)));
}

/** What a scan reads: a month range (YYYY-MM, inclusive), and the trips of each chunk it keeps. */
export function scanFilter(options: TripScanOptions = {}) {
  const wanted = options.vehicleClasses
    ? options.vehicleClasses.reduce((m, c) => m | (1 << vehicleClassCode(c)), 0)
    : -1;
  // Chunks record their classes but not their sources: a source filter looks at every trip.
  const sources = options.sources ? options.sources.reduce((m, s) => m | (1 << sourceCode(s)), 0) : -1;
  return {
    from: options.fromMonth ? monthKey(options.fromMonth) : "0000-00",
    to: options.toMonth ? monthKey(options.toMonth) : "9999-99",
    /** Inclusive chunk id range (analysis shards); all ids when absent. */
    fromId: options.chunkIds?.from ?? 0,
    toId: options.chunkIds?.to ?? Number.MAX_SAFE_INTEGER,
    /** The chunk's wanted trips, or null when it has none. */
    pick(row: ChunkRow): TripColumns | null {
      if ((row.class_mask & wanted) === 0) return null;
      const cols = decodeChunk(row);
      if ((row.class_mask & ~wanted) === 0 && sources === -1) return cols;
      const picked = selectTrips(
        cols,
        (i) => ((1 << cols.vehicleClass[i]) & wanted) !== 0 && ((1 << cols.source[i]) & sources) !== 0,
      );
      return picked.count > 0 ? picked : null;
    },
  };
}

/**
 * Consecutive chunks of one month to merge into one chunk each; only runs of two or more. A run of a month
 * still in progress (the newest month and the one before: a day's export holds a few trips of the next
 * month) is merged only once it is full, the next chunk not fitting: merging the month's last chunk with each
 * daily ingest's new one rewrote up to 10,000 trips a day to add ~1,300 (docs/performance.md, "Stop 54"), where
 * this rewrites each trip once. A settled month's runs are merged whatever their size.
 */
export function mergeableRuns<T extends { month: string; trip_count: number }>(chunks: T[]): T[][] {
  const settledBefore = chunks.length > 0 ? monthBefore(chunks[chunks.length - 1].month) : "";
  const runs: T[][] = [];
  let run: T[] = [];
  let size = 0;
  const close = (full: boolean) => {
    if (run.length > 1 && (full || run[0].month < settledBefore)) runs.push(run);
    run = [];
    size = 0;
  };
  for (const c of chunks) {
    if (run.length > 0 && c.month !== run[0].month) close(false);
    else if (run.length > 0 && size + c.trip_count > MAX_CHUNK_TRIPS) close(true);
    run.push(c);
    size += c.trip_count;
  }
  close(false);
  return runs;
}

export { dayOf, deviceKeyOf, fingerprintOf, monthOf } from "../engine/trips/prepared-append.js";

export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** A stored chunk of any supported format (chunk-format.ts checks its format and code table). */
export function decodeChunk(row: ChunkRow): TripColumns {
  return decodeColumns(row.columns, {
    format: row.format,
    tripCount: row.trip_count,
    stepCount: row.step_count,
    devices: JSON.parse(row.devices),
  });
}

/** The same bytes as a Buffer (no copy), as both database drivers take BLOBs. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
