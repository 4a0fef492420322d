import type { AnalysisSpec } from "./analyses/spec.js";
import type { YearMonth } from "../engine/time.js";

export type { YearMonth };

/**
 * The records the application stores and reads back through its ports (src/app/ports): accounts, zone
 * sets, analyses, counts results, usage. Plain data, no behaviour; the adapters in src/store map them
 * to and from their tables.
 */

export interface TagSummary {
  name: string;
  createdBy: string;
  createdAt: string;
  /** Live (not deleted) analyses carrying the tag. */
  analysisCount: number;
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

export type UserRole = "admin" | "analyst" | "viewer";

export interface UserRecord {
  email: string;
  role: UserRole;
  /** scrypt hash with its salt and parameters; null until a password is set. */
  passwordHash: string | null;
  disabledAt: string | null;
}

/** A web-application sign-in; the store keeps only a hash of the session id the cookie carries. */
export interface SessionRecord {
  idHash: string;
  email: string;
  orgId: string;
  csrfToken: string;
  createdAt: string;
  lastSeenAt: string;
}

/** Failed sign-ins of one subject (`account:EMAIL` or `ip:ADDRESS`). */
export interface FailureRecord {
  failures: number;
  lastFailureAt: string;
  lockedUntil: string | null;
}

export interface AuditEntry {
  orgId: string;
  at: string;
  actor: string;
  action: string;
  target: string | null;
}

export interface NetworkImportInfo {
  country: string;
  source: string;
  segmentCount: number;
  importedAt: string;
  /** IANA time zone the country's trips are sliced by (day types, day parts); absent: the built-in table. */
  timeZone?: string | null;
}

/** One area of a preset geography (a boundary imported with the network). */
export interface PresetArea {
  country: string;
  /** `admin_N` for administrative level N, `zip` for postal codes. */
  geographyType: string;
  /** The area's id in analysis results: the postal code for `zip`, else the OSM relation id. */
  areaId: string;
  osmId: number;
  name: string | null;
  geometry: { type: "Polygon" | "MultiPolygon"; coordinates: unknown };
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

export type ZoneSetSummary = Omit<StoredZoneSet, "featureCollection"> & {
  /** [west, south, east, north] of all zones, kept by the store (lists filter sets by network with it). */
  bbox: [number, number, number, number] | null;
};

/** Per-day trip tallies maintained by ingest; data periods and sample sizes read them. */
export interface DayCount {
  day: string;
  vehicleClass: string;
  source: string;
  trips: number;
  devices: number;
}

export interface DayTotal {
  day: string;
  trips: number;
  devices: number;
}

/** Lifecycle of an analysis; the API shows queued and running both as `Processing`. */
export type AnalysisState = "queued" | "running" | "done" | "failed" | "cancelled" | "deleted";

export interface StoredAnalysis {
  uuid: string;
  orgId: string;
  name: string;
  spec: AnalysisSpec;
  state: AnalysisState;
  failureReason: string | null;
  /** Names of the metrics stored for download (empty until done). */
  metrics: string[];
  /** 0..1 while running. */
  progress: number;
  jobId: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A counts result kept so later pages can be fetched. */
export interface StoredCountsResult {
  requestId: string;
  orgId: string;
  kind: "geometry" | "metrics";
  columns: string[];
  /** Fields the response repeats on every page (e.g. data_version). */
  extra: Record<string, unknown>;
  pageSize: number;
  totalRows: number;
  createdAt: string;
  expiresAt: string;
}

/** One charged counts call. */
export interface UsageRecord {
  keyId: string;
  orgId: string;
  at: string;
  segments: number;
  fields: number;
  units: number;
}

export interface UsageTotals {
  keyId: string;
  calls: number;
  segments: number;
  fields: number;
  units: number;
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
