import type { PreparedTrips } from "../../engine/trips/prepared-append.js";
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import type { Segment, TransitRoute } from "../../engine/network/types.js";
import type { TripColumns } from "../../engine/trips/columns.js";
import type { MatchedTrip, TraceSource, VehicleClass } from "../../engine/trips/types.js";
import type {
  SegmentStatCell,
  SegmentMonthColumns,
  SegmentMonthStats,
} from "../../engine/counts/segment-stats.js";
import type { SegmentCellBatch } from "../../engine/counts/segment-cells.js";
import type { TableSlice } from "../../engine/counts/metric-table.js";
import type {
  TagSummary,
  Organization,
  ApiKeyRecord,
  UserRole,
  UserRecord,
  SessionRecord,
  FailureRecord,
  AuditEntry,
  NetworkImportInfo,
  PresetArea,
  StoredZoneSet,
  ZoneSetSummary,
  YearMonth,
  DayCount,
  DayTotal,
  StoredAnalysis,
  StoredCountsResult,
  UsageRecord,
  UsageTotals,
  IngestRunRecord,
} from "../../domain/records.js";
import type { JobQueue } from "./job-queue.js";

/**
 * A store refuses a name its kind already has (case-insensitively, in the organization): the
 * adapter's own terms, which the application maps to the API's error (`src/app/error-mapping.ts`).
 */
export class NameTakenError extends Error {
  constructor(
    readonly kind: "organization" | "zone_set" | "analysis",
    readonly takenName: string,
  ) {
    super(`a ${kind.replace("_", " ")} named "${takenName}" already exists`);
    this.name = "NameTakenError";
  }
}

/**
 * Storage behind the service. The SQLite implementation is the default; any
 * other (e.g. PostgreSQL) implements the same repositories. No SQL lives
 * outside src/store/.
 */
export interface Store {
  readonly accounts: AccountRepo;
  readonly network: NetworkRepo;
  readonly zoneSets: ZoneSetRepo;
  readonly tripStats: TripStatsRepo;
  readonly segmentStats: SegmentStatsRepo;
  readonly countsResults: CountsResultRepo;
  readonly usage: UsageRepo;
  readonly analyses: AnalysisRepo;
  /** The durable job queue kept in the same database (so creating an analysis and its job is one transaction). */
  readonly jobs: JobQueue;
  /** Runs `fn` atomically: every repository write inside it commits together or not at all. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Runs `fn` while no other caller, in any process on this store, runs one under the same `name` (a
   * one-off set-up that several processes may start at once). Not a transaction: `fn`'s writes commit as
   * it makes them.
   */
  exclusively<T>(name: string, fn: () => Promise<T>): Promise<T>;
  readonly trips: TripRepo;
  /** Boundaries imported with each country's network (preset geographies). */
  readonly presetAreas: PresetAreaRepo;
  /** The organization's analysis tags and which analyses carry them. */
  readonly tags: TagRepo;
  /** Per-organization notification settings (the completion webhook). */
  readonly notifications: NotificationRepo;
  /** Passwords, roles, sessions, lockouts, reset links, the audit log and per-key rate limits. */
  readonly security: SecurityRepo;
  /** The chunks of distributed ingests (issue 15): their input until done, then their done marker. */
  readonly ingestChunks: IngestChunkRepo;
  close(): Promise<void>;
}

/** One chunk of a distributed ingest as its caller follows it. */
export interface IngestChunkState {
  seq: number;
  state: "queued" | "done" | "failed";
  /** What storing it gave (the chunk use case's counts), once done. */
  result: Record<string, unknown> | null;
  failure: string | null;
}

/**
 * Chunks of a distributed ingest: the caller stores each chunk's input (packed raw trips) here, where
 * every worker reads it; the worker that stores the chunk's trips marks it done in the same
 * transaction, so a chunk run twice (its first worker died after committing) stores nothing twice.
 */
export interface IngestChunkRepo {
  add(ingestId: string, seq: number, input: Uint8Array): Promise<void>;
  /** The input of a chunk still to do; null once it is done (or failed, or unknown). */
  input(ingestId: string, seq: number): Promise<Uint8Array | null>;
  /**
   * Inside the transaction that stores the chunk: locks its marker until the commit (two runs of one
   * chunk take turns) and answers whether it is still to do.
   */
  lockUndone(ingestId: string, seq: number): Promise<boolean>;
  /** Marks the chunk done with its result and drops its input; in the transaction of its trips. */
  markDone(ingestId: string, seq: number, result: Record<string, unknown>): Promise<void>;
  /** Marks a chunk that is still to do failed for good, dropping its input. */
  markFailed(ingestId: string, seq: number, reason: string): Promise<void>;
  /** Every chunk of the ingest, by seq. */
  list(ingestId: string): Promise<IngestChunkState[]>;
  /** Forgets the ingest's chunks (its caller has the report). */
  drop(ingestId: string): Promise<void>;
}

export interface TagRepo {
  /** Creates the tag; false when the organization already has it (case-insensitive). */
  create(orgId: string, name: string, createdBy: string): Promise<boolean>;
  list(orgId: string): Promise<TagSummary[]>;
  /** Names of existing tags among `names` (canonical spelling), in the order given. */
  existing(orgId: string, names: string[]): Promise<string[]>;
  /** Tags the analyses (creating missing tags); idempotent. */
  tag(orgId: string, names: string[], analysisUuids: string[], createdBy: string): Promise<void>;
  untag(orgId: string, names: string[], analysisUuids: string[]): Promise<void>;
  /** Tag names of an analysis, alphabetical. */
  tagsOf(analysisUuid: string): Promise<string[]>;
}

export interface NotificationRepo {
  completionWebhook(orgId: string): Promise<string | null>;
  /** null removes the webhook. */
  setCompletionWebhook(orgId: string, url: string | null): Promise<void>;
}

export interface AccountRepo {
  isEmpty(): Promise<boolean>;
  createOrganization(name: string): Promise<Organization>;
  findOrganization(idOrName: string): Promise<Organization | null>;
  listOrganizations(): Promise<Organization[]>;
  /** Creates the user if new and makes it a member of the organization (role analyst unless given). */
  addUser(email: string, orgId: string, role?: UserRole): Promise<void>;
  isMember(email: string, orgId: string): Promise<boolean>;
  /** E-mail addresses of the organization's users, as first written, in alphabetical order. */
  listMembers(orgId: string): Promise<string[]>;
  /** Stores the key's hash only; the plain key is known to the caller alone. */
  insertKey(record: ApiKeyRecord, keyHash: string): Promise<void>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  listKeys(orgId: string): Promise<ApiKeyRecord[]>;
  revokeKey(idOrPrefix: string): Promise<ApiKeyRecord | null>;
}

export interface SecurityRepo {
  /** The user as a member of the organization (role per organization), or null. */
  member(email: string, orgId: string): Promise<UserRecord | null>;
  /** The organizations a user belongs to, oldest membership first. */
  organizationsOf(email: string): Promise<string[]>;
  members(orgId: string): Promise<UserRecord[]>;
  passwordHashOf(email: string): Promise<string | null>;
  /** False when there is no such user. */
  setPasswordHash(email: string, hash: string): Promise<boolean>;
  setRole(email: string, orgId: string, role: UserRole): Promise<boolean>;
  setDisabled(email: string, disabled: boolean, at: string): Promise<boolean>;

  createSession(session: SessionRecord): Promise<void>;
  findSession(idHash: string): Promise<SessionRecord | null>;
  touchSession(idHash: string, at: string): Promise<void>;
  deleteSession(idHash: string): Promise<void>;
  deleteSessionsOf(email: string): Promise<void>;

  failuresOf(subject: string): Promise<FailureRecord | null>;
  saveFailures(subject: string, record: FailureRecord): Promise<void>;
  clearFailures(subject: string): Promise<void>;

  createReset(tokenHash: string, email: string, expiresAt: string): Promise<void>;
  /** The e-mail of an unused, unexpired reset link, marking it used; null otherwise. */
  consumeReset(tokenHash: string, now: string): Promise<string | null>;

  audit(entry: AuditEntry): Promise<void>;
  auditLog(orgId: string, limit: number): Promise<AuditEntry[]>;

  /** Requests per minute allowed to a key (null: the server's default). */
  rateLimitOf(keyId: string): Promise<number | null>;
  setRateLimit(keyId: string, perMinute: number | null): Promise<void>;
  setKeyLabel(keyId: string, label: string | null): Promise<void>;
  /** The organization's key that meters web-application sessions, created on first use. */
  webKeyOf(orgId: string): Promise<ApiKeyRecord>;
  /** Usage per key and month (YYYY-MM) since `from` (ISO). */
  monthlyUsage(
    orgId: string,
    from: string,
  ): Promise<{ keyId: string; month: string; calls: number; units: number }[]>;
}

export interface NetworkRepo {
  /** Replaces all segments of a country in one transaction. */
  replaceCountry(info: NetworkImportInfo, segments: Iterable<Segment>): Promise<void>;
  loadSegments(country: string): Promise<Segment[]>;
  countries(): Promise<NetworkImportInfo[]>;
  /** Replaces the country's transit layer (rail lines, bus routes) in one transaction. */
  replaceTransit(country: string, routes: readonly TransitRoute[]): Promise<void>;
  /** Rail lines first, then bus routes, each by OSM id. */
  loadTransit(country: string): Promise<TransitRoute[]>;
}

export interface PresetAreaRepo {
  /** Replaces all areas of a country (one transaction). */
  replaceCountry(country: string, areas: readonly PresetArea[]): Promise<void>;
  /** Geography types present for the country, with their area counts, in name order. */
  types(country: string): Promise<{ geographyType: string; areas: number }[]>;
  /** Areas of one geography type, by area id. */
  list(country: string, geographyType: string): Promise<PresetArea[]>;
}

export interface ZoneSetRepo {
  /** Throws NameTakenError when the name is taken (case-insensitive) in the organization. */
  create(zoneSet: StoredZoneSet): Promise<void>;
  /** Several sets in one transaction: all or none. */
  createMany(zoneSets: StoredZoneSet[]): Promise<void>;
  get(orgId: string, nameOrUuid: string): Promise<StoredZoneSet | null>;
  list(orgId: string): Promise<ZoneSetSummary[]>;
  delete(orgId: string, nameOrUuid: string): Promise<boolean>;
}

export interface TripStatsRepo {
  /** Adds to the tallies of each (day, vehicle class, source). */
  addDayCounts(country: string, rows: DayCount[]): Promise<void>;
  /** Months having at least one stored trip of the given vehicle classes (and sources, when given) in the country. */
  monthsWithTrips(
    country: string,
    vehicleClasses: readonly string[],
    sources?: readonly string[],
  ): Promise<YearMonth[]>;
  /**
   * Distinct devices that made stored trips, per month of the trips' days (YYYY-MM → count), for the
   * months `from..to` (YYYY-MM, inclusive) or all months when no range is given.
   */
  devicesByMonth(country: string, range?: { from: string; to: string }): Promise<Map<string, number>>;
  /** Per-day totals over the given vehicle classes and sources (all when absent), days `from..to` inclusive (YYYY-MM-DD). */
  dailyTotals(
    country: string,
    vehicleClasses: readonly string[],
    from: string,
    to: string,
    sources?: readonly string[],
  ): Promise<DayTotal[]>;
}

/** Part of a metric's CSV stored apart (putResultPieces): the metric reads as its result, then its pieces by number. */
export interface ResultPiece {
  metric: string;
  piece: number;
  /** The CSV text, or its UTF-8 bytes (a merge part's rows, never made into text). */
  csv: string | Uint8Array;
}

export interface AnalysisRepo {
  /** Throws NameTakenError when a live analysis of the organization has the name (case-insensitive). */
  create(analysis: { spec: AnalysisSpec; jobId: string | null }): Promise<StoredAnalysis>;
  /** By uuid, or by name (a live analysis first, else the latest deleted one of that name). */
  get(orgId: string, nameOrUuid: string): Promise<StoredAnalysis | null>;
  /** For the job runner, which works across organizations. */
  getByUuid(uuid: string): Promise<StoredAnalysis | null>;
  list(orgId: string): Promise<StoredAnalysis[]>;
  /** The transitions below are conditional: false when the analysis is not in a state that allows them. */
  markRunning(uuid: string): Promise<boolean>;
  setProgress(uuid: string, progress: number): Promise<void>;
  /**
   * running → done, storing each result (replacing any of an earlier attempt); results named `_…` (the
   * coverage review) are stored but not listed in `metrics`. The pieces stored while it ran
   * (putResultPieces) are kept with `keepPieces`, after their metric's result; else dropped.
   */
  complete(
    uuid: string,
    results: Record<string, string>,
    options?: { keepPieces?: boolean },
  ): Promise<boolean>;
  /**
   * Stores pieces of a running analysis' metrics (the merge parts of a sharded one write their rows
   * side by side), replacing those of the same metric and number (an earlier attempt's); false, storing
   * nothing, when the analysis is not running. Any ending but complete with keepPieces drops them.
   */
  putResultPieces(uuid: string, pieces: readonly ResultPiece[]): Promise<boolean>;
  /** queued|running → failed. */
  fail(uuid: string, reason: string): Promise<boolean>;
  /** queued|running → cancelled. */
  cancel(uuid: string): Promise<boolean>;
  /** done|failed|cancelled → deleted: results dropped, the name freed for reuse. */
  markDeleted(uuid: string): Promise<boolean>;
  /** A stored metric's CSV (its result, then its pieces in order), or null. */
  result(uuid: string, metric: string): Promise<string | null>;
  /** Queued and running analyses of every organization, oldest first: what the queue should hold. */
  unfinished(): Promise<StoredAnalysis[]>;
  /**
   * Records `jobId` as the analysis's job if its job is still `expected` (null: none yet) and it is
   * queued or running; false otherwise (another process gave it a job first, or it ended).
   */
  assignJob(uuid: string, jobId: string, expected: string | null): Promise<boolean>;
}

export interface SegmentStatsQuery {
  country: string;
  segmentIds: number[];
  /** YYYY-MM */
  months: string[];
  daysOfWeek: readonly number[];
  hours: readonly number[];
  directions: readonly ("with" | "against")[];
  vehicleClasses: readonly string[];
  sources: readonly string[];
  /** Also sum speed histograms, purposes and incomes (slower); default true. */
  details?: boolean;
}

export interface SegmentStatsRepo {
  /** Adds the cells to what is stored (cells with equal keys sum up). */
  add(country: string, cells: SegmentStatCell[]): Promise<void>;
  /** Adds an ingest batch's tallies: the same as `add` with its cells (`cellsOfBatch`), without a cell object each. */
  addBatch(country: string, batch: SegmentCellBatch): Promise<void>;
  /**
   * Tidies what batches left of the country's months before the one before its newest (what an ingest run does
   * at its end): the answers stay the same, reads get cheaper.
   */
  compact(country: string): Promise<void>;
  /** Sums per segment × month; only pairs with trips appear; ordered by segment id, month. */
  query(q: SegmentStatsQuery): Promise<SegmentMonthStats[]>;
  /**
   * The same sums without details, as columns (what a metrics call without detail fields reads): rows
   * equal to `query`'s, in its order, over the asked months.
   */
  totals(q: SegmentStatsQuery): Promise<SegmentMonthColumns>;
}

/** A stored page: its rows, or rows `from` … `to - 1` of a column table. */
export type ResultPageRows = unknown[][] | TableSlice;

export interface CountsResultRepo {
  /**
   * Stores the result header and its rows split into pages, each as rows or as a slice of a column
   * table (a metrics answer: no row is made); drops expired results.
   */
  save(result: StoredCountsResult, pages: readonly ResultPageRows[], now: string): Promise<void>;
  /** Null when unknown, of another organization, of another kind or expired at `now`. */
  get(
    orgId: string,
    kind: StoredCountsResult["kind"],
    requestId: string,
    now: string,
  ): Promise<StoredCountsResult | null>;
  page(requestId: string, page: number): Promise<unknown[][] | null>;
}

export interface UsageRepo {
  record(usage: UsageRecord): Promise<void>;
  /** Totals per key of the organization for calls at or after `from` and before `to` (ISO). */
  totals(orgId: string, from: string, to: string): Promise<UsageTotals[]>;
  /** Units a key used in [from, to). */
  unitsOfKey(keyId: string, from: string, to: string): Promise<number>;
  /** Sets a key's monthly unit quota (null = unlimited); returns the key id, or null for an unknown key. */
  setQuota(keyIdOrPrefix: string, units: number | null): Promise<string | null>;
  quotaOf(keyId: string): Promise<number | null>;
}

export interface TripScanOptions {
  /** Inclusive range of months of trip start (UTC); open when absent. */
  fromMonth?: YearMonth;
  toMonth?: YearMonth;
  /** Only these classes; all when absent. */
  vehicleClasses?: readonly VehicleClass[];
  /** Only trips of these trace sources; all when absent. */
  sources?: readonly TraceSource[];
  /** Only the chunks whose ids lie in this inclusive range (an analysis shard, see chunkIndex). */
  chunkIds?: { from: number; to: number };
}

/** One stored chunk of trips, as analysis shards are planned from. */
export interface TripChunkEntry {
  /** YYYY-MM of the chunk's trips' start (UTC). */
  month: string;
  id: number;
  tripCount: number;
}

export interface AppendResult {
  inserted: number;
  /** The trips that were new and are now stored (what per-segment tallies must add). */
  stored: readonly MatchedTrip[];
  /** Trips already stored (same device, start, end and source), skipped. */
  duplicates: number;
}

/**
 * Matched trips, partitioned by country and month of trip start and kept as
 * column chunks (see TripColumns) so analyses scan them without per-trip rows.
 */
export interface TripRepo {
  /**
   * Stores new trips, skipping those already stored, and updates the per-day tallies; one transaction.
   * `prepared`, when it holds exactly `trips`, spares the work done ahead (a store may ignore it).
   */
  appendTrips(
    country: string,
    trips: readonly MatchedTrip[],
    prepared?: PreparedTrips,
  ): Promise<AppendResult>;
  /** Column chunks in month order; a chunk is never empty. */
  scan(country: string, options?: TripScanOptions): AsyncIterable<TripColumns>;
  countTrips(country: string): Promise<number>;
  /** The chunks a scan with these months would read, in the scan's order (month, then id). */
  chunkIndex(
    country: string,
    options?: Pick<TripScanOptions, "fromMonth" | "toMonth">,
  ): Promise<TripChunkEntry[]>;
  /** Merges small chunks of each month into fewer, larger ones (scans read fewer rows); answers chunk counts. */
  compact(country: string): Promise<{ chunksBefore: number; chunksAfter: number }>;
  recordIngestRun(run: IngestRunRecord): Promise<void>;
  listIngestRuns(country?: string): Promise<IngestRunRecord[]>;
}

/**
 * Which store to open, as plain data: it crosses into analysis worker threads (workerData), so a
 * worker thread opens the same backend as its process (PostgreSQL, or the SQLite file read-only).
 */
export type StoreDescription = { kind: "sqlite"; file: string } | { kind: "postgres"; url: string };
