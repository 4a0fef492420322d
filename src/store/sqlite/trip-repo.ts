import type Database from "better-sqlite3";
import { tripRange, type TripColumns } from "../../engine/trips/columns.js";
import type { MatchedTrip } from "../../engine/trips/types.js";
import type { AppendResult, TripChunkEntry, TripRepo, TripScanOptions } from "../../app/ports/store.js";
import type { IngestRunRecord } from "../../domain/records.js";
import { dayOf, type PreparedTrips } from "../../engine/trips/prepared-append.js";
import {
  chunkRowOf,
  chunkRowOfColumns,
  deviceKeyOf,
  fingerprintOf,
  groupBy,
  MAX_CHUNK_TRIPS,
  mergeableRuns,
  mergedChunkRow,
  monthOf,
  scanFilter,
  type ChunkRow,
} from "../trip-chunks.js";
import type { Sync } from "./async-port.js";

/** Trips as column chunks in SQLite: one row per chunk of trips of one (country, month). */
export class SqliteTrips implements Sync<TripRepo> {
  constructor(private readonly db: Database.Database) {}

  appendTrips(country: string, trips: readonly MatchedTrip[], prepared?: PreparedTrips): AppendResult {
    const addFingerprint = this.db.prepare(
      "INSERT OR IGNORE INTO trip_fingerprints (country, fingerprint) VALUES (?, ?)",
    );
    const ahead = prepared?.preparedFor(trips) ? prepared : undefined;
    return this.db.transaction(() => {
      const isNew = trips.map(
        (t, i) => addFingerprint.run(country, ahead ? ahead.fingerprint(i) : fingerprintOf(t)).changes === 1,
      );
      const fresh = trips.filter((_, i) => isNew[i]);
      this.insertChunks(country, fresh, fresh.length === trips.length ? ahead : undefined);
      const days = ahead?.days.filter((_, i) => isNew[i]);
      this.addDayCounts(country, fresh, days, ahead);
      return { inserted: fresh.length, stored: fresh, duplicates: trips.length - fresh.length };
    })();
  }

  /** One chunk per month (split when too big); the columns prepared ahead when they hold exactly `trips`. */
  private insertChunks(country: string, trips: readonly MatchedTrip[], prepared?: PreparedTrips): void {
    if (prepared) {
      for (const [month, cols] of prepared.columnsByMonth()) {
        if (cols.count <= MAX_CHUNK_TRIPS) this.insertChunk(country, month, chunkRowOfColumns(cols));
        else
          for (let i = 0; i < cols.count; i += MAX_CHUNK_TRIPS)
            this.insertChunk(country, month, chunkRowOfColumns(tripRange(cols, i, i + MAX_CHUNK_TRIPS)));
      }
      return;
    }
    for (const [month, ofMonth] of groupBy(trips, (t) => monthOf(t.startT)))
      for (let i = 0; i < ofMonth.length; i += MAX_CHUNK_TRIPS)
        this.insertChunk(country, month, chunkRowOf(ofMonth.slice(i, i + MAX_CHUNK_TRIPS)));
  }

  *scan(country: string, options: TripScanOptions = {}): Iterable<TripColumns> {
    const filter = scanFilter(options);
    // Chunk ids first, then one chunk per step: the async port yields between steps, and an open
    // better-sqlite3 iterator would keep the connection busy for every other caller meanwhile.
    const ids = this.db
      .prepare(
        "SELECT id FROM trip_chunks WHERE country = ? AND month BETWEEN ? AND ? AND id BETWEEN ? AND ? ORDER BY month, id",
      )
      .pluck()
      .all(country, filter.from, filter.to, filter.fromId, filter.toId) as number[];
    const chunk = this.db.prepare(
      "SELECT format, trip_count, step_count, class_mask, devices, columns FROM trip_chunks WHERE id = ?",
    );
    for (const id of ids) {
      const row = chunk.get(id) as ChunkRow | undefined;
      // Only compaction deletes chunks; its merged chunks came after the id list, so going on would miss trips.
      if (!row) throw new Error(`the trips of ${country} were compacted during the scan; run it again`);
      const picked = filter.pick(row);
      if (picked) yield picked;
    }
  }

  chunkIndex(country: string, options: TripScanOptions = {}): TripChunkEntry[] {
    const filter = scanFilter(options);
    return this.db
      .prepare(
        `SELECT month, id, trip_count AS tripCount FROM trip_chunks
         WHERE country = ? AND month BETWEEN ? AND ? ORDER BY month, id`,
      )
      .all(country, filter.from, filter.to) as TripChunkEntry[];
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
        const joined = mergedChunkRow(run.map((c) => read.get(c.id) as ChunkRow));
        run.forEach((c) => remove.run(c.id));
        this.insertChunk(country, run[0].month, joined);
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

  private insertChunk(country: string, month: string, row: ChunkRow): void {
    this.db
      .prepare(
        `INSERT INTO trip_chunks (country, month, format, trip_count, step_count, class_mask, devices, columns)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        country,
        month,
        row.format,
        row.trip_count,
        row.step_count,
        row.class_mask,
        row.devices,
        row.columns,
      );
  }

  /**
   * Per UTC day of trip start, class and source: trips, and distinct devices.
   * Devices are exact: trip_device_days remembers which devices a day has seen,
   * trip_device_months which a month has (a device new to the month is new to its day).
   */
  private addDayCounts(
    country: string,
    trips: readonly MatchedTrip[],
    days?: readonly string[],
    prepared?: PreparedTrips,
  ): void {
    const addDevice = this.db.prepare(
      `INSERT OR IGNORE INTO trip_device_days (country, day, vehicle_class, source, device_key)
       VALUES (?, ?, ?, ?, ?)`,
    );
    const addMonthDevice = this.db.prepare(
      "INSERT OR IGNORE INTO trip_device_months (country, month, device_key) VALUES (?, ?, ?)",
    );
    const tallies = new Map<
      string,
      { day: string; cls: string; source: string; trips: number; devices: number }
    >();
    // A device's trips of one day are mostly in one batch: its day is claimed (and its key hashed) once.
    const seen = new Set<string>();
    for (let i = 0; i < trips.length; i++) {
      const t = trips[i];
      const day = days ? days[i] : dayOf(t.startT);
      const k = `${day}|${t.vehicleClass}|${t.source}`;
      let tally = tallies.get(k);
      if (!tally)
        tallies.set(k, (tally = { day, cls: t.vehicleClass, source: t.source, trips: 0, devices: 0 }));
      tally.trips++;
      const deviceDay = `${k}|${t.deviceId}`;
      if (seen.has(deviceDay)) continue;
      seen.add(deviceDay);
      const key = prepared ? prepared.deviceKey(t.deviceId) : deviceKeyOf(t.deviceId);
      const added = addDevice.run(country, day, t.vehicleClass, t.source, key).changes;
      if (added > 0) addMonthDevice.run(country, day.slice(0, 7), key);
      tally.devices += added;
    }
    const upsert = this.db.prepare(
      `INSERT INTO trip_day_counts (country, day, vehicle_class, source, trips, devices) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (country, day, vehicle_class, source)
       DO UPDATE SET trips = trips + excluded.trips, devices = devices + excluded.devices`,
    );
    for (const t of tallies.values()) upsert.run(country, t.day, t.cls, t.source, t.trips, t.devices);
  }
}
