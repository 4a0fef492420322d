import { type TripColumns } from "../../engine/trips/columns.js";
import type { MatchedTrip } from "../../engine/trips/types.js";
import {
  chunkRowOf,
  dayOf,
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
import type {
  AppendResult,
  TripChunkEntry,
  TripRepo,
  TripScanOptions,
  TripStatsRepo,
} from "../../app/ports/store.js";
import type { DayCount, DayTotal, IngestRunRecord, YearMonth } from "../../domain/records.js";
import pg from "pg";
import { binaryField } from "./copy-out.js";
import type { PgDb } from "./db.js";

/**
 * Chunks a scan fetches per round trip (up to 10,000 trips, ~16 MB each): with the next page fetched
 * while one is used, at most 8 chunks are held. Each COPY statement costs the server about 20 ms over
 * the bytes it sends (its row buffer grows anew to the size of a chunk): scanning 1,000,000 trips took
 * 3.3-3.5 s of server CPU in pages of 2, 2.7-2.9 s in pages of 4 (docs/performance.md).
 */
const SCAN_BATCH = 4;

const CHUNK_COLUMNS = "format, trip_count, step_count, class_mask, devices, columns";

/** The partition of a month: `trip_chunks_2026_01` holds months from '2026-01' up to (not with) '2026-02'. */
export function partitionOf(month: string): { name: string; from: string; to: string } {
  const [year, m] = month.split("-").map(Number);
  const next = m === 12 ? `${year + 1}-01` : `${year}-${String(m + 1).padStart(2, "0")}`;
  return { name: `trip_chunks_${month.replace("-", "_")}`, from: month, to: next };
}

/**
 * Trips as column chunks in PostgreSQL, in the same chunk format as SQLite (trip-chunks.ts), the
 * chunk table partitioned by month. Ingest workers may append at once: the dedupe fingerprints and
 * device-days are claimed by INSERT … ON CONFLICT DO NOTHING, which serialises on the key, so a trip
 * seen by two workers is stored by one.
 */
export class PostgresTrips implements TripRepo {
  /** Partitions known to exist (created by this process or found by a CREATE … IF NOT EXISTS). */
  private readonly partitions = new Set<string>();

  constructor(private readonly db: PgDb) {}

  async appendTrips(country: string, trips: readonly MatchedTrip[]): Promise<AppendResult> {
    const byMonth = groupBy(trips, (t) => monthOf(t.startT));
    await this.ensurePartitions([...byMonth.keys()]);
    return this.db.transaction(async () => {
      const prints = trips.map(fingerprintOf);
      const claimed = await this.db.rows<{ fingerprint: Buffer }>(
        `INSERT INTO trip_fingerprints (country, fingerprint) SELECT $1, f FROM unnest($2::bytea[]) f
         ON CONFLICT DO NOTHING RETURNING fingerprint`,
        [country, prints],
      );
      const fresh = new Set(claimed.map((r) => r.fingerprint.toString("hex")));
      // A trip repeated within the same batch has one fingerprint: the first copy is the stored one.
      const stored = trips.filter((_, i) => fresh.delete(prints[i].toString("hex")));
      for (const [month, ofMonth] of groupBy(stored, (t) => monthOf(t.startT)))
        for (let i = 0; i < ofMonth.length; i += MAX_CHUNK_TRIPS)
          await this.insertChunk(country, month, ofMonth.slice(i, i + MAX_CHUNK_TRIPS));
      await this.addDayCounts(country, stored);
      return { inserted: stored.length, stored, duplicates: trips.length - stored.length };
    });
  }

  async *scan(country: string, options: TripScanOptions = {}): AsyncIterable<TripColumns> {
    const filter = scanFilter(options);
    const page = (after: { month: string; id: number }) => this.scanPage(country, filter, after);
    let next = page({ month: "", id: 0 });
    for (;;) {
      const rows = await next;
      const more = rows.length === SCAN_BATCH;
      // The next page streams in while this one is used; a scan left early leaves it unread.
      if (more) next = page(rows[rows.length - 1]);
      next.catch(() => {});
      for (const row of rows) {
        const picked = filter.pick(row);
        if (picked) yield picked;
      }
      if (!more) return;
    }
  }

  /**
   * One keyset page of a scan: each round trip holds no cursor or connection between pages. A binary
   * COPY, so that the chunks arrive as they are stored, not hex-encoded (copy-out.ts).
   */
  private async scanPage(
    country: string,
    filter: ReturnType<typeof scanFilter>,
    after: { month: string; id: number },
  ): Promise<(ChunkRow & { month: string; id: number })[]> {
    const text = pg.escapeLiteral;
    const int = (n: number) => String(Math.trunc(n));
    const rows = await this.db.copyRows(
      `SELECT month, id, ${CHUNK_COLUMNS} FROM trip_chunks
       WHERE country = ${text(country)} AND month BETWEEN ${text(filter.from)} AND ${text(filter.to)}
         AND (month, id) > (${text(after.month)}::ctext, ${int(after.id)}::bigint)
         AND id BETWEEN ${int(filter.fromId)} AND ${int(filter.toId)}
       ORDER BY month, id LIMIT ${SCAN_BATCH}`,
    );
    return rows.map((r) => ({
      month: binaryField.text(r[0]),
      id: binaryField.int8(r[1]),
      format: binaryField.int4(r[2]),
      trip_count: binaryField.int4(r[3]),
      step_count: binaryField.int4(r[4]),
      class_mask: binaryField.int4(r[5]),
      devices: binaryField.text(r[6]),
      columns: binaryField.bytea(r[7]),
    }));
  }

  async chunkIndex(country: string, options: TripScanOptions = {}): Promise<TripChunkEntry[]> {
    const filter = scanFilter(options);
    const rows = await this.db.rows<{ month: string; id: number; trip_count: number }>(
      `SELECT month, id, trip_count FROM trip_chunks
       WHERE country = $1 AND month BETWEEN $2 AND $3 ORDER BY month, id`,
      [country, filter.from, filter.to],
    );
    return rows.map((r) => ({ month: r.month, id: Number(r.id), tripCount: Number(r.trip_count) }));
  }

  async countTrips(country: string): Promise<number> {
    const row = await this.db.row<{ n: number }>(
      "SELECT COALESCE(SUM(trip_count), 0) AS n FROM trip_chunks WHERE country = $1",
      [country],
    );
    return row!.n;
  }

  async compact(country: string): Promise<{ chunksBefore: number; chunksAfter: number }> {
    return this.db.transaction(async () => {
      // Rows locked: a concurrent compaction of the country waits instead of merging the same chunks.
      const chunks = await this.db.rows<{ id: number; month: string; trip_count: number }>(
        "SELECT id, month, trip_count FROM trip_chunks WHERE country = $1 ORDER BY month, id FOR UPDATE",
        [country],
      );
      const runs = mergeableRuns(chunks);
      for (const run of runs) {
        const ids = run.map((c) => c.id);
        const rows = await this.db.rows<ChunkRow>(
          `DELETE FROM trip_chunks WHERE country = $1 AND month = $2 AND id = ANY($3::bigint[])
           RETURNING id, ${CHUNK_COLUMNS}`,
          [country, run[0].month, ids],
        );
        const byId = new Map(rows.map((r) => [(r as ChunkRow & { id: number }).id, r]));
        await this.insertChunkRow(country, run[0].month, mergedChunkRow(ids.map((id) => byId.get(id)!)));
      }
      const merged = runs.reduce((sum, run) => sum + run.length - 1, 0);
      return { chunksBefore: chunks.length, chunksAfter: chunks.length - merged };
    });
  }

  async recordIngestRun(run: IngestRunRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO ingest_runs (country, source, path, size_bytes, sha256, started_at, finished_at, counts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        run.country,
        run.source,
        run.path,
        run.sizeBytes,
        run.sha256,
        run.startedAt,
        run.finishedAt,
        JSON.stringify(run.counts),
      ],
    );
  }

  async listIngestRuns(country?: string): Promise<IngestRunRecord[]> {
    const rows = await this.db.rows<{
      country: string;
      source: string;
      path: string;
      size_bytes: number;
      sha256: string;
      started_at: string;
      finished_at: string;
      counts: string;
    }>(
      `SELECT country, source, path, size_bytes, sha256, started_at, finished_at, counts FROM ingest_runs
       WHERE $1::ctext IS NULL OR country = $1 ORDER BY id`,
      [country ?? null],
    );
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

  /**
   * Creates missing month partitions, each on its own connection and committed at once: creating a
   * partition locks the parent table, which must not last as long as the ingest transaction.
   */
  private async ensurePartitions(months: string[]): Promise<void> {
    for (const month of months) {
      if (this.partitions.has(month)) continue;
      const p = partitionOf(month);
      try {
        await this.db.outside(
          `CREATE TABLE IF NOT EXISTS ${p.name} PARTITION OF trip_chunks FOR VALUES FROM ('${p.from}') TO ('${p.to}')`,
        );
      } catch (e) {
        // Another process created it between our IF NOT EXISTS check and the CREATE.
        if (!(e instanceof Error && "code" in e && (e.code === "42P07" || e.code === "23505"))) throw e;
      }
      this.partitions.add(month);
    }
  }

  private async insertChunk(country: string, month: string, trips: readonly MatchedTrip[]): Promise<void> {
    await this.insertChunkRow(country, month, chunkRowOf(trips));
  }

  private async insertChunkRow(country: string, month: string, r: ChunkRow): Promise<void> {
    await this.db.run(
      `INSERT INTO trip_chunks (country, month, ${CHUNK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [country, month, r.format, r.trip_count, r.step_count, r.class_mask, r.devices, r.columns],
    );
  }

  /** Per UTC day of trip start, class and source: trips, and the devices that day had not seen yet. */
  private async addDayCounts(country: string, trips: readonly MatchedTrip[]): Promise<void> {
    if (trips.length === 0) return;
    const newDevices = await this.db.rows<{
      day: string;
      vehicle_class: string;
      source: string;
      device_key: Buffer;
    }>(
      `INSERT INTO trip_device_days (country, day, vehicle_class, source, device_key)
       SELECT DISTINCT $1::ctext, d, c, s, k FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[]) AS t(d, c, s, k)
       ON CONFLICT DO NOTHING RETURNING day, vehicle_class, source, device_key`,
      [
        country,
        trips.map((t) => dayOf(t.startT)),
        trips.map((t) => t.vehicleClass),
        trips.map((t) => t.source),
        trips.map((t) => deviceKeyOf(t.deviceId)),
      ],
    );
    const tallies = new Map<string, DayCount>();
    const tally = (day: string, vehicleClass: string, source: string) => {
      const k = `${day}|${vehicleClass}|${source}`;
      let found = tallies.get(k);
      if (!found) tallies.set(k, (found = { day, vehicleClass, source, trips: 0, devices: 0 }));
      return found;
    };
    for (const t of trips) tally(dayOf(t.startT), t.vehicleClass, t.source).trips++;
    for (const d of newDevices) tally(d.day, d.vehicle_class, d.source).devices++;
    await upsertDayCounts(this.db, country, [...tallies.values()]);
    await this.addMonthDevices(country, newDevices);
  }

  /**
   * The devices each month has seen (devicesByMonth): a device new to a month is new to one of its days,
   * so only the device-days just claimed can add one. In key order, so concurrent ingests lock alike.
   */
  private async addMonthDevices(
    country: string,
    deviceDays: { day: string; device_key: Buffer }[],
  ): Promise<void> {
    const keys = new Map<string, { month: string; key: Buffer }>();
    for (const d of deviceDays) {
      const month = d.day.slice(0, 7);
      keys.set(`${month}|${d.device_key.toString("hex")}`, { month, key: d.device_key });
    }
    if (keys.size === 0) return;
    const sorted = [...keys].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
    await this.db.run(
      `INSERT INTO trip_device_months (country, month, device_key)
       SELECT $1, m, k FROM unnest($2::text[], $3::bytea[]) AS t(m, k) ON CONFLICT DO NOTHING`,
      [country, sorted.map((v) => v.month), sorted.map((v) => v.key)],
    );
  }
}

/** Adds to the tallies in one statement; rows in key order, so concurrent ingests lock them in one order. */
async function upsertDayCounts(db: PgDb, country: string, rows: DayCount[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) =>
    `${a.day}|${a.vehicleClass}|${a.source}` < `${b.day}|${b.vehicleClass}|${b.source}` ? -1 : 1,
  );
  await db.run(
    `INSERT INTO trip_day_counts (country, day, vehicle_class, source, trips, devices)
     SELECT $1, d, c, s, t, v FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[]) AS x(d, c, s, t, v)
     ON CONFLICT (country, day, vehicle_class, source)
     DO UPDATE SET trips = trip_day_counts.trips + excluded.trips, devices = trip_day_counts.devices + excluded.devices`,
    [
      country,
      sorted.map((r) => r.day),
      sorted.map((r) => r.vehicleClass),
      sorted.map((r) => r.source),
      sorted.map((r) => r.trips),
      sorted.map((r) => r.devices),
    ],
  );
}

export class PostgresTripStats implements TripStatsRepo {
  constructor(private readonly db: PgDb) {}

  async addDayCounts(country: string, rows: DayCount[]): Promise<void> {
    // Equal keys in one batch would touch a row twice in one statement: sum them first.
    const summed = new Map<string, DayCount>();
    for (const r of rows) {
      const k = `${r.day}|${r.vehicleClass}|${r.source}`;
      const s = summed.get(k);
      if (s) {
        s.trips += r.trips;
        s.devices += r.devices;
      } else summed.set(k, { ...r });
    }
    await upsertDayCounts(this.db, country, [...summed.values()]);
  }

  async devicesByMonth(country: string, range?: { from: string; to: string }): Promise<Map<string, number>> {
    // One row per device and month (trip_device_months), not per device-day: counting the distinct
    // devices of 807,591 device-days (1,000,000 trips) took the server ~0.8 s per analysis.
    const rows = await this.db.rows<{ month: string; devices: number }>(
      `SELECT month, COUNT(*) AS devices FROM trip_device_months
       WHERE country = $1 AND month BETWEEN $2 AND $3 GROUP BY month`,
      [country, range?.from ?? "0000-00", range?.to ?? "9999-99"],
    );
    return new Map(rows.map((r) => [r.month, r.devices]));
  }

  async monthsWithTrips(
    country: string,
    vehicleClasses: readonly string[],
    sources?: readonly string[],
  ): Promise<YearMonth[]> {
    if (vehicleClasses.length === 0 || sources?.length === 0) return [];
    const rows = await this.db.rows<{ ym: string }>(
      `SELECT DISTINCT substr(day, 1, 7) AS ym FROM trip_day_counts
       WHERE country = $1 AND vehicle_class = ANY($2::text[]) AND ($3::text[] IS NULL OR source = ANY($3::text[]))
       AND trips > 0 ORDER BY ym`,
      [country, vehicleClasses, sources ?? null],
    );
    return rows.map((r) => ({ year: Number(r.ym.slice(0, 4)), month: Number(r.ym.slice(5, 7)) }));
  }

  async dailyTotals(
    country: string,
    vehicleClasses: readonly string[],
    from: string,
    to: string,
    sources?: readonly string[],
  ): Promise<DayTotal[]> {
    if (vehicleClasses.length === 0 || sources?.length === 0) return [];
    return this.db.rows<DayTotal>(
      `SELECT day, SUM(trips) AS trips, SUM(devices) AS devices FROM trip_day_counts
       WHERE country = $1 AND vehicle_class = ANY($2::text[]) AND ($3::text[] IS NULL OR source = ANY($3::text[]))
       AND day BETWEEN $4 AND $5 GROUP BY day ORDER BY day`,
      [country, vehicleClasses, sources ?? null, from, to],
    );
  }
}
