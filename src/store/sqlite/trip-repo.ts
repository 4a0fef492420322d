import type Database from "better-sqlite3";
import { createHash } from "node:crypto";
import {
  COLUMN_LAYOUT,
  columnsToTrips,
  lengthOf,
  selectTrips,
  sourceCode,
  tripsToColumns,
  vehicleClassCode,
  type TripColumns,
} from "../../engine/trips/columns.js";
import type { MatchedTrip } from "../../engine/trips/types.js";
import type { AppendResult, IngestRunRecord, TripRepo, TripScanOptions } from "../types.js";
import { monthKey } from "../../engine/time.js";
import type { Sync } from "./async-port.js";

/** Version of the chunk BLOB layout (COLUMN_LAYOUT order, each column padded to 8 bytes). */
const CHUNK_FORMAT = 1;
/** Upper bound of trips per chunk: big enough for fast scans, small enough to decode in one go. */
const MAX_CHUNK_TRIPS = 50_000;

interface ChunkRow {
  format: number;
  trip_count: number;
  step_count: number;
  class_mask: number;
  devices: string;
  columns: Buffer;
}

/** Trips as column chunks in SQLite: one row per chunk of trips of one (country, month). */
export class SqliteTrips implements Sync<TripRepo> {
  constructor(private readonly db: Database.Database) {}

  appendTrips(country: string, trips: readonly MatchedTrip[]): AppendResult {
    const addFingerprint = this.db.prepare(
      "INSERT OR IGNORE INTO trip_fingerprints (country, fingerprint) VALUES (?, ?)",
    );
    return this.db.transaction(() => {
      const fresh = trips.filter((t) => addFingerprint.run(country, fingerprintOf(t)).changes === 1);
      for (const [month, ofMonth] of groupBy(fresh, (t) => monthOf(t.startT)))
        for (let i = 0; i < ofMonth.length; i += MAX_CHUNK_TRIPS)
          this.insertChunk(country, month, ofMonth.slice(i, i + MAX_CHUNK_TRIPS));
      this.addDayCounts(country, fresh);
      return { inserted: fresh.length, stored: fresh, duplicates: trips.length - fresh.length };
    })();
  }

  *scan(country: string, options: TripScanOptions = {}): Iterable<TripColumns> {
    const from = options.fromMonth ? monthKey(options.fromMonth) : "0000-00";
    const to = options.toMonth ? monthKey(options.toMonth) : "9999-99";
    const wanted = options.vehicleClasses
      ? options.vehicleClasses.reduce((m, c) => m | (1 << vehicleClassCode(c)), 0)
      : -1;
    // Chunk ids first, then one chunk per step: the async port yields between steps, and an open
    // better-sqlite3 iterator would keep the connection busy for every other caller meanwhile.
    const ids = this.db
      .prepare(
        `SELECT id FROM trip_chunks WHERE country = ? AND month BETWEEN ? AND ? AND (class_mask & ?) != 0
         ORDER BY month, id`,
      )
      .pluck()
      .all(country, from, to, wanted) as number[];
    const chunk = this.db.prepare(
      "SELECT format, trip_count, step_count, class_mask, devices, columns FROM trip_chunks WHERE id = ?",
    );
    // Chunks record their classes but not their sources: a source filter looks at every trip.
    const sources = options.sources ? options.sources.reduce((m, s) => m | (1 << sourceCode(s)), 0) : -1;
    for (const id of ids) {
      const row = chunk.get(id) as ChunkRow | undefined;
      // Only compaction deletes chunks; its merged chunks came after the id list, so going on would miss trips.
      if (!row) throw new Error(`the trips of ${country} were compacted during the scan; run it again`);
      const cols = decodeChunk(row);
      if ((row.class_mask & ~wanted) === 0 && sources === -1) {
        yield cols;
        continue;
      }
      const picked = selectTrips(
        cols,
        (i) => ((1 << cols.vehicleClass[i]) & wanted) !== 0 && ((1 << cols.source[i]) & sources) !== 0,
      );
      if (picked.count > 0) yield picked;
    }
  }

  countTrips(country: string): number {
    const row = this.db
      .prepare("SELECT COALESCE(SUM(trip_count), 0) AS n FROM trip_chunks WHERE country = ?")
      .get(country) as { n: number };
    return row.n;
  }

  compact(country: string): { chunksBefore: number; chunksAfter: number } {
    return this.db.transaction(() => {
      const chunks = this.db
        .prepare("SELECT id, month, trip_count FROM trip_chunks WHERE country = ? ORDER BY month, id")
        .all(country) as { id: number; month: string; trip_count: number }[];
      const runs = mergeableRuns(chunks);
      const read = this.db.prepare(
        "SELECT format, trip_count, step_count, class_mask, devices, columns FROM trip_chunks WHERE id = ?",
      );
      const remove = this.db.prepare("DELETE FROM trip_chunks WHERE id = ?");
      for (const run of runs) {
        const trips = run.flatMap((c) => columnsToTrips(decodeChunk(read.get(c.id) as ChunkRow)));
        run.forEach((c) => remove.run(c.id));
        this.insertChunk(country, run[0].month, trips);
      }
      const merged = runs.reduce((sum, run) => sum + run.length - 1, 0);
      return { chunksBefore: chunks.length, chunksAfter: chunks.length - merged };
    })();
  }

  recordIngestRun(run: IngestRunRecord): void {
    this.db
      .prepare(
        `INSERT INTO ingest_runs (country, source, path, size_bytes, sha256, started_at, finished_at, counts)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        run.country,
        run.source,
        run.path,
        run.sizeBytes,
        run.sha256,
        run.startedAt,
        run.finishedAt,
        JSON.stringify(run.counts),
      );
  }

  listIngestRuns(country?: string): IngestRunRecord[] {
    const rows = this.db
      .prepare(
        `SELECT country, source, path, size_bytes, sha256, started_at, finished_at, counts FROM ingest_runs
         WHERE ? IS NULL OR country = ? ORDER BY id`,
      )
      .all(country ?? null, country ?? null) as {
      country: string;
      source: string;
      path: string;
      size_bytes: number;
      sha256: string;
      started_at: string;
      finished_at: string;
      counts: string;
    }[];
    return rows.map((r) => ({
      country: r.country,
      source: r.source,
      path: r.path,
      sizeBytes: r.size_bytes,
      sha256: r.sha256,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      counts: JSON.parse(r.counts),
    }));
  }

  private insertChunk(country: string, month: string, trips: MatchedTrip[]): void {
    const cols = tripsToColumns(trips);
    const mask = cols.vehicleClass.reduce((m, c) => m | (1 << c), 0);
    this.db
      .prepare(
        `INSERT INTO trip_chunks (country, month, format, trip_count, step_count, class_mask, devices, columns)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        country,
        month,
        CHUNK_FORMAT,
        cols.count,
        cols.pathStart[cols.count],
        mask,
        JSON.stringify(cols.devices),
        encodeColumns(cols),
      );
  }

  /**
   * Per UTC day of trip start, class and source: trips, and distinct devices.
   * Devices are exact: trip_device_days remembers which devices a day has seen.
   */
  private addDayCounts(country: string, trips: readonly MatchedTrip[]): void {
    const addDevice = this.db.prepare(
      `INSERT OR IGNORE INTO trip_device_days (country, day, vehicle_class, source, device_key)
       VALUES (?, ?, ?, ?, ?)`,
    );
    const tallies = new Map<
      string,
      { day: string; cls: string; source: string; trips: number; devices: number }
    >();
    for (const t of trips) {
      const day = new Date(t.startT).toISOString().slice(0, 10);
      const k = `${day}|${t.vehicleClass}|${t.source}`;
      let tally = tallies.get(k);
      if (!tally)
        tallies.set(k, (tally = { day, cls: t.vehicleClass, source: t.source, trips: 0, devices: 0 }));
      tally.trips++;
      tally.devices += addDevice.run(country, day, t.vehicleClass, t.source, deviceKeyOf(t.deviceId)).changes;
    }
    const upsert = this.db.prepare(
      `INSERT INTO trip_day_counts (country, day, vehicle_class, source, trips, devices) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (country, day, vehicle_class, source)
       DO UPDATE SET trips = trips + excluded.trips, devices = devices + excluded.devices`,
    );
    for (const t of tallies.values()) upsert.run(country, t.day, t.cls, t.source, t.trips, t.devices);
  }
}

/** Consecutive chunks of one month that fit together in one chunk; only runs of two or more. */
function mergeableRuns<T extends { month: string; trip_count: number }>(chunks: T[]): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let size = 0;
  for (const c of chunks) {
    if (run.length > 0 && (c.month !== run[0].month || size + c.trip_count > MAX_CHUNK_TRIPS)) {
      runs.push(run);
      run = [];
      size = 0;
    }
    run.push(c);
    size += c.trip_count;
  }
  runs.push(run);
  return runs.filter((r) => r.length > 1);
}

/** Identity of a trip across re-runs of the same input: device, start, end and source. */
function fingerprintOf(t: MatchedTrip): Buffer {
  return createHash("sha256")
    .update(`${t.deviceId}\u0000${t.startT}\u0000${t.endT}\u0000${t.source}`)
    .digest()
    .subarray(0, 16);
}

const deviceKeyOf = (deviceId: string) => createHash("sha256").update(deviceId).digest().subarray(0, 12);

const monthOf = (t: number) => new Date(t).toISOString().slice(0, 7);

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const pad8 = (n: number) => Math.ceil(n / 8) * 8;

/** The typed arrays back to back, each starting on an 8-byte boundary so decoding can view them in place. */
function encodeColumns(cols: TripColumns): Buffer {
  const arrays = COLUMN_LAYOUT.map(([name]) => cols[name]);
  const out = Buffer.alloc(arrays.reduce((sum, a) => sum + pad8(a.byteLength), 0));
  let offset = 0;
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), offset);
    offset += pad8(a.byteLength);
  }
  return out;
}

function decodeChunk(row: ChunkRow): TripColumns {
  if (row.format !== CHUNK_FORMAT) throw new Error(`trip chunk format ${row.format} is not supported`);
  // One copy into a fresh (aligned) buffer; every column is then a view on it.
  const bytes = new Uint8Array(row.columns.byteLength);
  bytes.set(row.columns);
  const cols: Record<string, unknown> = { count: row.trip_count, devices: JSON.parse(row.devices) };
  let offset = 0;
  for (const [name, Type] of COLUMN_LAYOUT) {
    const length = lengthOf(name, row.trip_count, row.step_count);
    cols[name] = new Type(bytes.buffer, offset, length);
    offset += pad8(length * Type.BYTES_PER_ELEMENT);
  }
  return cols as unknown as TripColumns;
}
