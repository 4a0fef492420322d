import type { Segment } from "../engine/network/types.js";
import type { TripColumns } from "../engine/trips/columns.js";
import type { MatchedTrip, VehicleClass } from "../engine/trips/types.js";

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
  readonly trips: TripRepo;
  close(): void;
}

export interface Organization {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  /** First characters of the key, safe to show in listings. */
  prefix: string;
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
}

export interface AccountRepo {
  isEmpty(): boolean;
  createOrganization(name: string): Organization;
  findOrganization(idOrName: string): Organization | null;
  listOrganizations(): Organization[];
  /** Creates the user if new and makes it a member of the organization. */
  addUser(email: string, orgId: string): void;
  isMember(email: string, orgId: string): boolean;
  /** Stores the key's hash only; the plain key is known to the caller alone. */
  insertKey(record: ApiKeyRecord, keyHash: string): void;
  findKeyByHash(keyHash: string): ApiKeyRecord | null;
  listKeys(orgId: string): ApiKeyRecord[];
  revokeKey(idOrPrefix: string): ApiKeyRecord | null;
}

export interface NetworkImportInfo {
  country: string;
  source: string;
  segmentCount: number;
  importedAt: string;
}

export interface NetworkRepo {
  /** Replaces all segments of a country in one transaction. */
  replaceCountry(info: NetworkImportInfo, segments: Iterable<Segment>): void;
  loadSegments(country: string): Segment[];
  countries(): NetworkImportInfo[];
}

export interface StoredZoneSet {
  uuid: string;
  orgId: string;
  name: string;
  /** `polygon` or `line`: the kind of the set's zones. */
  geomType: "polygon" | "line";
  withCalibration: boolean;
  zoneCount: number;
  createdAt: string;
  /** The zones as a GeoJSON FeatureCollection, normalised by the domain layer. */
  featureCollection: ZoneFeatureCollection;
}

export interface ZoneFeatureCollection {
  type: "FeatureCollection";
  features: ZoneFeature[];
}

export interface ZoneFeature {
  type: "Feature";
  geometry: { type: string; coordinates: unknown };
  properties: Record<string, unknown>;
}

export type ZoneSetSummary = Omit<StoredZoneSet, "featureCollection">;

export interface ZoneSetRepo {
  /** Throws DomainError 409 when the name is taken (case-insensitive) in the organization. */
  create(zoneSet: StoredZoneSet): void;
  /** Several sets in one transaction: all or none. */
  createMany(zoneSets: StoredZoneSet[]): void;
  get(orgId: string, nameOrUuid: string): StoredZoneSet | null;
  list(orgId: string): ZoneSetSummary[];
  delete(orgId: string, nameOrUuid: string): boolean;
}

/** A calendar month with stored trips. */
export interface YearMonth {
  year: number;
  month: number;
}

/** Per-day trip tallies maintained by ingest; data periods and sample sizes read them. */
export interface TripStatsRepo {
  /** Months having at least one stored trip of the given vehicle classes in the country. */
  monthsWithTrips(country: string, vehicleClasses: readonly string[]): YearMonth[];
}

export interface TripScanOptions {
  /** Inclusive range of months of trip start (UTC); open when absent. */
  fromMonth?: YearMonth;
  toMonth?: YearMonth;
  /** Only these classes; all when absent. */
  vehicleClasses?: readonly VehicleClass[];
}

export interface AppendResult {
  inserted: number;
  /** Trips already stored (same device, start, end and source), skipped. */
  duplicates: number;
}

/** One trace file's ingest, kept for reporting. */
export interface IngestRunRecord {
  country: string;
  source: string;
  path: string;
  sizeBytes: number;
  sha256: string;
  startedAt: string;
  finishedAt: string;
  /** The ingest report's counts (points read, drops by reason, trips stored, ...). */
  counts: Record<string, unknown>;
}

/**
 * Matched trips, partitioned by country and month of trip start and kept as
 * column chunks (see TripColumns) so analyses scan them without per-trip rows.
 */
export interface TripRepo {
  /** Stores new trips, skipping those already stored, and updates the per-day tallies; one transaction. */
  appendTrips(country: string, trips: readonly MatchedTrip[]): AppendResult;
  /** Column chunks in month order; a chunk is never empty. */
  scan(country: string, options?: TripScanOptions): Iterable<TripColumns>;
  countTrips(country: string): number;
  /** Merges small chunks of each month into fewer, larger ones (scans read fewer rows); answers chunk counts. */
  compact(country: string): { chunksBefore: number; chunksAfter: number };
  recordIngestRun(run: IngestRunRecord): void;
  listIngestRuns(country?: string): IngestRunRecord[];
}
