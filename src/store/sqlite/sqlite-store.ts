import Database from "better-sqlite3";
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { Segment, TransitRoute } from "../../engine/network/types.js";
import type { JobQueue } from "../../app/ports/job-queue.js";
import type {
  AccountRepo,
  CountsResultRepo,
  SegmentStatsRepo,
  UsageRepo,
  AnalysisRepo,
  NetworkRepo,
  PresetAreaRepo,
  Store,
  TripRepo,
  TripStatsRepo,
  ZoneSetRepo,
  NotificationRepo,
  TagRepo,
  SecurityRepo,
  IngestChunkRepo,
} from "../../app/ports/store.js";
import type {
  ApiKeyRecord,
  DayCount,
  DayTotal,
  NetworkImportInfo,
  Organization,
  StoredZoneSet,
  UserRole,
  YearMonth,
  ZoneSetSummary,
} from "../../domain/records.js";
import { NameTakenError } from "../../app/ports/store.js";
import { SqliteNotifications, SqliteTags } from "./tags.js";
import { SqliteCountsResults, SqliteSegmentStats, SqliteUsage } from "./counts.js";
import { SqliteAnalyses } from "./analyses.js";
import { signallingEnqueues, SqliteJobQueue } from "./job-queue.js";
import { SqlitePresetAreas } from "./preset-areas.js";
import { migrate } from "./migrations.js";
import { statementCache } from "./statements.js";
import { SqliteTrips } from "./trip-repo.js";
import { SqliteSecurity } from "./security.js";
import { SqliteIngestChunks } from "./ingest-chunks.js";
import { zoneSetBboxJson } from "./zone-set-bbox.js";
import { WAL_BOUND_BYTES, walPagesBound, WalCheckpoints, type CheckpointResult } from "./wal-checkpoints.js";
import { packCoords, unpackCoords } from "../packed-coords.js";
import { asyncPort, TransactionGate, type Sync } from "./async-port.js";
import {
  toKey,
  toOrg,
  toSegment,
  toZoneSetSummary,
  type KeyRow,
  type OrgRow,
  type SegmentRow,
  type ZoneSetRow,
} from "../rows.js";

export interface SqliteStoreOptions {
  /** A read-only connection to an existing, migrated file (job worker threads). */
  readonly?: boolean;
  /** Epoch-ms clock of the job queue's leases; tests inject one. */
  clock?: () => number;
  /**
   * WAL checkpoints on a thread of their own, off the writer's commits (default). Off for a connection
   * opened inside a worker thread beside the process's own (heavy requests): it writes little, and one
   * checkpointing thread per process is enough.
   */
  backgroundCheckpoints?: boolean;
}

const now = () => new Date().toISOString();
const key = (s: string) => s.trim().toLowerCase();

/**
 * The page size of a new store. A packed segment-month's BLOBs run to several KB, and with SQLite's default 4 KB most
 * spilled into overflow chains: the tallies' upserts and commits of a month of daily ingests took ~0.6 s less with
 * 16 KB (docs/trip-data.md, "16 KB pages").
 */
const PAGE_BYTES = 16_384;

/** The embedded default store: one SQLite file, migrated on open. */
export class SqliteStore implements Store {
  readonly db: Database.Database;
  readonly accounts: AccountRepo;
  readonly network: NetworkRepo;
  readonly zoneSets: ZoneSetRepo;
  readonly tripStats: TripStatsRepo;
  readonly segmentStats: SegmentStatsRepo;
  readonly countsResults: CountsResultRepo;
  readonly usage: UsageRepo;
  readonly analyses: AnalysisRepo;
  readonly jobs: JobQueue;
  readonly trips: TripRepo;
  readonly presetAreas: PresetAreaRepo;
  readonly tags: TagRepo;
  readonly notifications: NotificationRepo;
  readonly security: SecurityRepo;
  readonly ingestChunks: IngestChunkRepo;
  private readonly gate: TransactionGate;
  /** `exclusively`'s queues: per name, the settling of the last caller's turn. */
  private readonly exclusive = new Map<string, Promise<void>>();
  /** Background WAL checkpoints of a writable file (none for ":memory:" or read-only connections). */
  private readonly checkpoints: WalCheckpoints | null = null;
  private walWatch: NodeJS.Timeout | null = null;

  /** `file` ":memory:" gives a private in-memory database (tests). */
  constructor(
    readonly file: string,
    options: SqliteStoreOptions = {},
  ) {
    if (options.readonly) {
      this.db = new Database(file, { readonly: true, fileMustExist: true });
    } else {
      if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
      this.db = new Database(file);
      // Before WAL mode is set: only a file not written yet takes a page size; an existing one keeps its own.
      this.db.pragma(`page_size = ${PAGE_BYTES}`);
      this.db.pragma("journal_mode = WAL");
      if (file !== ":memory:" && options.backgroundCheckpoints !== false)
        this.checkpoints = this.checkpointInBackground();
    }
    this.db.pragma("foreign_keys = ON");
    this.db.pragma("busy_timeout = 5000");
    if (!options.readonly) migrate(this.db);
    const gate = (this.gate = new TransactionGate(this.db));
    this.accounts = asyncPort<AccountRepo>(new SqliteAccounts(this.db), gate);
    this.network = asyncPort<NetworkRepo>(new SqliteNetwork(this.db), gate);
    this.zoneSets = asyncPort<ZoneSetRepo>(new SqliteZoneSets(this.db), gate);
    this.tripStats = asyncPort<TripStatsRepo>(new SqliteTripStats(this.db), gate);
    this.segmentStats = asyncPort<SegmentStatsRepo>(new SqliteSegmentStats(this.db), gate);
    this.countsResults = asyncPort<CountsResultRepo>(new SqliteCountsResults(this.db), gate);
    this.usage = asyncPort<UsageRepo>(new SqliteUsage(this.db), gate);
    this.analyses = asyncPort<AnalysisRepo>(new SqliteAnalyses(this.db), gate);
    this.jobs = signallingEnqueues(asyncPort<JobQueue>(new SqliteJobQueue(this.db, options.clock), gate));
    this.trips = asyncPort<TripRepo>(new SqliteTrips(this.db), gate, ["scan"]);
    this.presetAreas = asyncPort<PresetAreaRepo>(new SqlitePresetAreas(this.db), gate);
    this.tags = asyncPort<TagRepo>(new SqliteTags(this.db), gate);
    this.notifications = asyncPort<NotificationRepo>(new SqliteNotifications(this.db), gate);
    this.security = asyncPort<SecurityRepo>(new SqliteSecurity(this.db), gate);
    this.ingestChunks = asyncPort<IngestChunkRepo>(new SqliteIngestChunks(this.db), gate);
  }

  /**
   * BEGIN IMMEDIATE … COMMIT around the async `fn` on the one connection; other callers' port calls wait
   * until it ends (see TransactionGate). Keep the body short: it holds SQLite's single write lock.
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    const result = await this.gate.transaction(fn);
    this.checkpoints?.request();
    return result;
  }

  /**
   * The writer checkpoints only past WAL_BOUND_BYTES (the WAL's bound); below it a thread does, after each
   * transaction and, for writes outside transactions, when the WAL changed since the last look. The WAL
   * file is cut back to the bound when it restarts after a larger transaction.
   */
  private checkpointInBackground(): WalCheckpoints {
    const pageSize = this.db.pragma("page_size", { simple: true }) as number;
    this.db.pragma(`wal_autocheckpoint = ${walPagesBound(pageSize)}`);
    this.db.pragma(`journal_size_limit = ${WAL_BOUND_BYTES}`);
    const checkpoints = new WalCheckpoints(this.file, () => {
      // No thread (e.g. it could not start): the writer checkpoints in its commits, as SQLite does by default.
      this.db.pragma("wal_autocheckpoint = 1000");
      this.stopWalWatch();
    });
    let lastChange = 0;
    this.walWatch = setInterval(() => {
      const changed = walChangedAt(this.file);
      if (changed !== lastChange) checkpoints.request();
      lastChange = changed;
    }, WAL_WATCH_MS);
    this.walWatch.unref();
    return checkpoints;
  }

  /** Waits for the background checkpoints asked for so far; answers the last one's report (tests). */
  async walCheckpointed(): Promise<CheckpointResult | null> {
    return (await this.checkpoints?.settled()) ?? null;
  }

  private stopWalWatch(): void {
    if (this.walWatch) clearInterval(this.walWatch);
    this.walWatch = null;
  }

  /**
   * One process owns a SQLite file (the embedded deployment), so an in-process queue per name is enough;
   * a second process on the same file would need its own lock (docs/deployment.md).
   */
  async exclusively<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const before = this.exclusive.get(name) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.exclusive.set(name, settled);
    try {
      return await run;
    } finally {
      if (this.exclusive.get(name) === settled) this.exclusive.delete(name);
    }
  }

  /** A clean close leaves no WAL behind: every frame copied into the database file, the WAL cut to nothing. */
  async close(): Promise<void> {
    this.stopWalWatch();
    if (this.checkpoints) {
      await this.checkpoints.close();
      // TRUNCATE waits for other processes' readers of the file; not for long at shutdown (the last
      // connection to close removes the WAL anyway).
      this.db.pragma("busy_timeout = 1000");
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    }
    this.db.close();
  }
}

/** How often a store looks whether writes outside transactions grew its WAL. */
const WAL_WATCH_MS = 5000;

/** When the WAL file was last written (0 when there is none). */
function walChangedAt(file: string): number {
  try {
    return statSync(`${file}-wal`).mtimeMs;
  } catch {
    return 0;
  }
}

class SqliteAccounts implements Sync<AccountRepo> {
  /** For the statements every request runs (key lookup). */
  private readonly sql: (sql: string) => Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.sql = statementCache(db);
  }

  isEmpty(): boolean {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM organizations").get() as { n: number }).n === 0;
  }

  createOrganization(name: string): Organization {
    const org: Organization = { id: crypto.randomUUID(), name: name.trim(), createdAt: now() };
    try {
      this.db
        .prepare("INSERT INTO organizations (id, name, name_key, created_at) VALUES (?, ?, ?, ?)")
        .run(org.id, org.name, key(name), org.createdAt);
    } catch (e) {
      if (isUniqueViolation(e)) throw new NameTakenError("organization", name);
      throw e;
    }
    return org;
  }

  findOrganization(idOrName: string): Organization | null {
    const row = this.db
      .prepare("SELECT id, name, created_at FROM organizations WHERE id = ? OR name_key = ?")
      .get(idOrName, key(idOrName)) as OrgRow | undefined;
    return row ? toOrg(row) : null;
  }

  listOrganizations(): Organization[] {
    const rows = this.db.prepare("SELECT id, name, created_at FROM organizations ORDER BY created_at").all();
    return (rows as OrgRow[]).map(toOrg);
  }

  addUser(email: string, orgId: string, role: UserRole = "analyst"): void {
    this.db.transaction(() => {
      this.db
        .prepare("INSERT OR IGNORE INTO users (email_key, email, created_at) VALUES (?, ?, ?)")
        .run(key(email), email.trim(), now());
      this.db
        .prepare("INSERT OR IGNORE INTO memberships (email_key, org_id, role) VALUES (?, ?, ?)")
        .run(key(email), orgId, role);
    })();
  }

  isMember(email: string, orgId: string): boolean {
    return (
      this.db
        .prepare("SELECT 1 FROM memberships WHERE email_key = ? AND org_id = ?")
        .get(key(email), orgId) !== undefined
    );
  }

  listMembers(orgId: string): string[] {
    const rows = this.db
      .prepare(
        "SELECT u.email FROM memberships m JOIN users u ON u.email_key = m.email_key WHERE m.org_id = ? ORDER BY u.email_key",
      )
      .all(orgId) as { email: string }[];
    return rows.map((r) => r.email);
  }

  insertKey(record: ApiKeyRecord, keyHash: string): void {
    this.db
      .prepare(
        "INSERT INTO api_keys (id, org_id, prefix, key_hash, label, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .run(record.id, record.orgId, record.prefix, keyHash, record.label, record.createdAt, record.revokedAt);
  }

  findKeyByHash(keyHash: string): ApiKeyRecord | null {
    const row = this.sql(
      "SELECT id, org_id, prefix, label, created_at, revoked_at FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL",
    ).get(keyHash) as KeyRow | undefined;
    return row ? toKey(row) : null;
  }

  listKeys(orgId: string): ApiKeyRecord[] {
    const rows = this.db
      .prepare(
        "SELECT id, org_id, prefix, label, created_at, revoked_at FROM api_keys WHERE org_id = ? ORDER BY created_at",
      )
      .all(orgId);
    return (rows as KeyRow[]).map(toKey);
  }

  revokeKey(idOrPrefix: string): ApiKeyRecord | null {
    const row = this.db
      .prepare(
        "SELECT id, org_id, prefix, label, created_at, revoked_at FROM api_keys WHERE id = ? OR prefix = ?",
      )
      .get(idOrPrefix, idOrPrefix) as KeyRow | undefined;
    if (!row) return null;
    this.db
      .prepare("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?")
      .run(now(), row.id);
    return toKey({ ...row, revoked_at: row.revoked_at ?? now() });
  }
}

class SqliteNetwork implements Sync<NetworkRepo> {
  constructor(private readonly db: Database.Database) {}

  replaceCountry(info: NetworkImportInfo, segments: Iterable<Segment>): void {
    const insert = this.db.prepare(
      `INSERT INTO segments (country, id, way_id, piece, road_class, highway, road_type, oneway, speed_kph, name,
        length_m, from_node, to_node, access, coords) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM segments WHERE country = ?").run(info.country);
      let count = 0;
      for (const s of segments) {
        insert.run(
          info.country,
          s.id,
          s.wayId,
          s.index,
          s.roadClass,
          s.highway,
          s.roadType,
          s.oneway ? 1 : 0,
          s.speedKph,
          s.name,
          s.lengthM,
          s.fromNode,
          s.toNode,
          s.access,
          packCoords(s.coords),
        );
        count++;
      }
      this.db
        .prepare(
          `INSERT INTO network_imports (country, source, segment_count, imported_at, time_zone) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (country) DO UPDATE SET source = excluded.source, segment_count = excluded.segment_count,
           imported_at = excluded.imported_at, time_zone = excluded.time_zone`,
        )
        .run(info.country, info.source, count, info.importedAt, info.timeZone ?? null);
    })();
  }

  replaceTransit(country: string, routes: readonly TransitRoute[]): void {
    const insert = this.db.prepare(
      `INSERT INTO transit_routes (country, kind, osm_id, service, name, ref, way_ids, coords)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM transit_routes WHERE country = ?").run(country);
      for (const r of routes)
        insert.run(
          country,
          r.kind,
          r.osmId,
          r.service,
          r.name,
          r.ref,
          JSON.stringify(r.wayIds),
          packCoords(r.coords),
        );
    })();
  }

  loadTransit(country: string): TransitRoute[] {
    const rows = this.db
      .prepare(
        `SELECT kind, osm_id, service, name, ref, way_ids, coords FROM transit_routes
         WHERE country = ? ORDER BY kind = 'bus', osm_id`,
      )
      .all(country) as {
      kind: TransitRoute["kind"];
      osm_id: number;
      service: string;
      name: string | null;
      ref: string | null;
      way_ids: string;
      coords: Buffer;
    }[];
    return rows.map((r) => ({
      kind: r.kind,
      osmId: r.osm_id,
      service: r.service,
      name: r.name,
      ref: r.ref,
      wayIds: JSON.parse(r.way_ids) as number[],
      coords: unpackCoords(r.coords),
    }));
  }

  loadSegments(country: string): Segment[] {
    const rows = this.db
      .prepare("SELECT * FROM segments WHERE country = ? ORDER BY id")
      .all(country) as SegmentRow[];
    return rows.map(toSegment);
  }

  countries(): NetworkImportInfo[] {
    const rows = this.db
      .prepare(
        "SELECT country, source, segment_count, imported_at, time_zone FROM network_imports ORDER BY country",
      )
      .all() as {
      country: string;
      source: string;
      segment_count: number;
      imported_at: string;
      time_zone: string | null;
    }[];
    return rows.map((r) => ({
      country: r.country,
      source: r.source,
      segmentCount: r.segment_count,
      importedAt: r.imported_at,
      timeZone: r.time_zone,
    }));
  }
}

class SqliteZoneSets implements Sync<ZoneSetRepo> {
  constructor(private readonly db: Database.Database) {}

  create(z: StoredZoneSet): void {
    try {
      this.db
        .prepare(
          `INSERT INTO zone_sets (uuid, org_id, name, name_key, geom_type, with_calibration, zone_count, created_at, features, bbox)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          z.uuid,
          z.orgId,
          z.name,
          key(z.name),
          z.geomType,
          z.withCalibration ? 1 : 0,
          z.zoneCount,
          z.createdAt,
          JSON.stringify(z.featureCollection),
          zoneSetBboxJson(z.featureCollection),
        );
    } catch (e) {
      if (isUniqueViolation(e)) throw new NameTakenError("zone_set", z.name);
      throw e;
    }
  }

  createMany(zoneSets: StoredZoneSet[]): void {
    this.db.transaction(() => zoneSets.forEach((z) => this.create(z)))();
  }

  get(orgId: string, nameOrUuid: string): StoredZoneSet | null {
    const row = this.db
      .prepare(
        "SELECT * FROM zone_sets WHERE org_id = ? AND (uuid = ? OR name_key = ?) ORDER BY uuid = ? DESC",
      )
      .get(orgId, nameOrUuid, key(nameOrUuid), nameOrUuid) as ZoneSetRow | undefined;
    return row ? { ...toZoneSetSummary(row), featureCollection: JSON.parse(row.features!) } : null;
  }

  list(orgId: string): ZoneSetSummary[] {
    const rows = this.db
      .prepare(
        `SELECT uuid, org_id, name, geom_type, with_calibration, zone_count, created_at, bbox FROM zone_sets
         WHERE org_id = ? ORDER BY created_at, name`,
      )
      .all(orgId) as ZoneSetRow[];
    return rows.map(toZoneSetSummary);
  }

  delete(orgId: string, nameOrUuid: string): boolean {
    const found = this.get(orgId, nameOrUuid);
    if (!found) return false;
    this.db.prepare("DELETE FROM zone_sets WHERE uuid = ?").run(found.uuid);
    return true;
  }
}

class SqliteTripStats implements Sync<TripStatsRepo> {
  /** For the statements every metrics request runs (device tallies, days with trips). */
  private readonly sql: (sql: string) => Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.sql = statementCache(db);
  }

  addDayCounts(country: string, rows: DayCount[]): void {
    const upsert = this.db.prepare(
      `INSERT INTO trip_day_counts (country, day, vehicle_class, source, trips, devices) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (country, day, vehicle_class, source)
       DO UPDATE SET trips = trips + excluded.trips, devices = devices + excluded.devices`,
    );
    this.db.transaction(() => {
      for (const r of rows) upsert.run(country, r.day, r.vehicleClass, r.source, r.trips, r.devices);
    })();
  }

  devicesByMonth(country: string, range?: { from: string; to: string }): Map<string, number> {
    const rows = this.sql(
      `SELECT month, COUNT(*) AS devices FROM trip_device_months
       WHERE country = ? AND month BETWEEN ? AND ? GROUP BY month`,
    ).all(country, range?.from ?? "0000-00", range?.to ?? "9999-99") as { month: string; devices: number }[];
    return new Map(rows.map((r) => [r.month, r.devices]));
  }

  monthsWithTrips(
    country: string,
    vehicleClasses: readonly string[],
    sources?: readonly string[],
  ): YearMonth[] {
    if (vehicleClasses.length === 0 || sources?.length === 0) return [];
    const { where, values } = classesAndSources(vehicleClasses, sources);
    const rows = this.db
      .prepare(
        `SELECT DISTINCT substr(day, 1, 7) AS ym FROM trip_day_counts
         WHERE country = ? AND ${where} AND trips > 0 ORDER BY ym`,
      )
      .all(country, ...values) as { ym: string }[];
    return rows.map((r) => ({ year: Number(r.ym.slice(0, 4)), month: Number(r.ym.slice(5, 7)) }));
  }

  dailyTotals(
    country: string,
    vehicleClasses: readonly string[],
    from: string,
    to: string,
    sources?: readonly string[],
  ): DayTotal[] {
    if (vehicleClasses.length === 0 || sources?.length === 0) return [];
    const { where, values } = classesAndSources(vehicleClasses, sources);
    // Prepared once per class and source count: every metrics request reads its month's days with trips.
    return this.sql(
      `SELECT day, SUM(trips) AS trips, SUM(devices) AS devices FROM trip_day_counts
       WHERE country = ? AND ${where} AND day BETWEEN ? AND ? GROUP BY day ORDER BY day`,
    ).all(country, ...values, from, to) as DayTotal[];
  }
}

/** The tallies' class filter, and their source filter when sources are given. */
function classesAndSources(vehicleClasses: readonly string[], sources?: readonly string[]) {
  const marks = (list: readonly string[]) => list.map(() => "?").join(",");
  const where = `vehicle_class IN (${marks(vehicleClasses)})`;
  return sources
    ? { where: `${where} AND source IN (${marks(sources)})`, values: [...vehicleClasses, ...sources] }
    : { where, values: [...vehicleClasses] };
}

function isUniqueViolation(e: unknown): boolean {
  return e instanceof Error && "code" in e && String(e.code).startsWith("SQLITE_CONSTRAINT");
}
