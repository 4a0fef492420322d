import type { Job, JobState } from "../app/ports/job-queue.js";
import type { IngestChunkState } from "../app/ports/store.js";
import type { AnalysisSpec } from "../domain/analyses/spec.js";
import type {
  AnalysisState,
  ApiKeyRecord,
  Organization,
  PresetArea,
  SessionRecord,
  StoredAnalysis,
  StoredCountsResult,
  UserRecord,
  UserRole,
  ZoneSetSummary,
} from "../domain/records.js";
import type { Segment } from "../engine/network/types.js";
import { unpackCoords } from "./packed-coords.js";

/**
 * Table rows as both SQL adapters read them (the schemas name columns alike) and the records they map to.
 * A boolean column is 0/1 in SQLite and a real boolean in PostgreSQL.
 */
type SqlBoolean = boolean | number;

export interface OrgRow {
  id: string;
  name: string;
  created_at: string;
}
export const toOrg = (r: OrgRow): Organization => ({ id: r.id, name: r.name, createdAt: r.created_at });

export interface KeyRow {
  id: string;
  org_id: string;
  prefix: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}
export const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  orgId: r.org_id,
  prefix: r.prefix,
  label: r.label,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export interface MemberRow {
  email: string;
  role: UserRole;
  password_hash: string | null;
  disabled_at: string | null;
}
export const toUser = (r: MemberRow): UserRecord => ({
  email: r.email,
  role: r.role,
  passwordHash: r.password_hash,
  disabledAt: r.disabled_at,
});

export interface AnalysisRow {
  uuid: string;
  org_id: string;
  name: string;
  spec: string;
  state: AnalysisState;
  failure_reason: string | null;
  metrics: string;
  progress: number;
  job_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}
export const toAnalysis = (r: AnalysisRow): StoredAnalysis => ({
  uuid: r.uuid,
  orgId: r.org_id,
  name: r.name,
  spec: JSON.parse(r.spec) as AnalysisSpec,
  state: r.state,
  failureReason: r.failure_reason,
  metrics: JSON.parse(r.metrics) as string[],
  progress: r.progress,
  jobId: r.job_id,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
});

export interface JobRow {
  id: string;
  kind: string;
  payload: string;
  state: JobState;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  failure_reason: string | null;
  created_at: number;
  updated_at: number;
  priority: number;
}
export const toJob = (r: JobRow): Job => ({
  id: r.id,
  kind: r.kind,
  payload: JSON.parse(r.payload),
  state: r.state,
  attempts: r.attempts,
  leaseOwner: r.lease_owner,
  leaseExpiresAt: r.lease_expires_at,
  failureReason: r.failure_reason,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  priority: r.priority,
});

export interface ZoneSetRow {
  uuid: string;
  org_id: string;
  name: string;
  geom_type: "polygon" | "line";
  with_calibration: SqlBoolean;
  zone_count: number;
  created_at: string;
  features?: string;
  bbox: string | null;
}
export const toZoneSetSummary = (r: ZoneSetRow): ZoneSetSummary => ({
  uuid: r.uuid,
  orgId: r.org_id,
  name: r.name,
  geomType: r.geom_type,
  withCalibration: Boolean(r.with_calibration),
  zoneCount: r.zone_count,
  createdAt: r.created_at,
  bbox: r.bbox === null ? null : (JSON.parse(r.bbox) as ZoneSetSummary["bbox"]),
});

export interface SegmentRow {
  id: number;
  way_id: number;
  piece: number;
  road_class: Segment["roadClass"];
  highway: string;
  road_type: Segment["roadType"];
  oneway: SqlBoolean;
  speed_kph: number;
  name: string | null;
  length_m: number;
  from_node: number;
  to_node: number;
  access: number;
  coords: Buffer;
}
export const toSegment = (r: SegmentRow): Segment => ({
  id: r.id,
  wayId: r.way_id,
  index: r.piece,
  roadClass: r.road_class,
  highway: r.highway,
  roadType: r.road_type,
  oneway: Boolean(r.oneway),
  speedKph: r.speed_kph,
  name: r.name,
  lengthM: r.length_m,
  fromNode: r.from_node,
  toNode: r.to_node,
  access: r.access,
  coords: unpackCoords(r.coords),
});

export interface PresetAreaRow {
  country: string;
  geography_type: string;
  area_id: string;
  osm_id: number;
  name: string | null;
  geometry: string;
}
export const toPresetArea = (r: PresetAreaRow): PresetArea => ({
  country: r.country,
  geographyType: r.geography_type,
  areaId: r.area_id,
  osmId: r.osm_id,
  name: r.name,
  geometry: JSON.parse(r.geometry),
});

export interface CountsResultRow {
  request_id: string;
  org_id: string;
  kind: StoredCountsResult["kind"];
  columns: string;
  extra: string;
  page_size: number;
  total_rows: number;
  created_at: string;
  expires_at: string;
}
export const toCountsResult = (r: CountsResultRow): StoredCountsResult => ({
  requestId: r.request_id,
  orgId: r.org_id,
  kind: r.kind,
  columns: JSON.parse(r.columns),
  extra: JSON.parse(r.extra),
  pageSize: r.page_size,
  totalRows: r.total_rows,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

export interface ChunkRow {
  seq: number;
  state: IngestChunkState["state"];
  result: string | null;
  failure: string | null;
}
export const toChunkState = (r: ChunkRow): IngestChunkState => ({
  seq: Number(r.seq),
  state: r.state,
  result: r.result === null ? null : (JSON.parse(r.result) as Record<string, unknown>),
  failure: r.failure,
});

export interface SessionRow {
  id_hash: string;
  email: string;
  org_id: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
}

/** The session columns both stores select (with the user's email), as `toSession` reads them. */
export const SESSION_SELECT = `SELECT s.id_hash, u.email, s.org_id, s.csrf_token, s.created_at, s.last_seen_at
  FROM sessions s JOIN users u ON u.email_key = s.email_key`;

export const toSession = (r: SessionRow): SessionRecord => ({
  idHash: r.id_hash,
  email: r.email,
  orgId: r.org_id,
  csrfToken: r.csrf_token,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
});
