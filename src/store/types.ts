import type { Segment } from "../engine/network/types.js";

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
export interface DayCount {
  day: string;
  vehicleClass: string;
  source: string;
  trips: number;
  devices: number;
}

export interface TripStatsRepo {
  /** Adds to the tallies of each (day, vehicle class, source). */
  addDayCounts(country: string, rows: DayCount[]): void;
  /** Months having at least one stored trip of the given vehicle classes in the country. */
  monthsWithTrips(country: string, vehicleClasses: readonly string[]): YearMonth[];
}
