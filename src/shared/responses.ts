/**
 * The response bodies the web client reads, as TypeScript types: the server builds these bodies against
 * them (src/api/v2/*.ts) and the client (src/web/client) reads them, so a renamed field fails the compiler
 * on both sides. The OpenAPI document (/docs) describes the same bodies from the routes' schemas.
 */
import type { Feature, LineString } from "geojson";
import type { Role } from "./vocabulary.js";

export type Bbox = [number, number, number, number];

/** A period as the zone-analysis interface writes it: MM/DD/YYYY, both ends inclusive. */
export interface UsRange {
  start_date: string;
  end_date: string;
}

/** GET /api/v2/networks: one imported road network. */
export interface NetworkInfo {
  country: string;
  segment_count: number;
  imported_at: string;
  /** IANA zone of the network's local clock (day types and parts). */
  time_zone: string;
  bbox: Bbox;
  /** `YYYY-MM` of the latest month with stored trips; null without trips. */
  last_trip_month: string | null;
}

/** GET /api/v2/networks/{country}/segments: the segments of a box. */
export interface SegmentCollection {
  type: "FeatureCollection";
  features: Feature<LineString, { segment_id: number; road_class: string; name: string | null }>[];
  total: number;
  truncated: boolean;
}

/** A zone set in the list (GET /api/v2/zone_sets) and on creation. */
export interface ZoneSetSummary {
  name: string;
  uuid: string;
  geom_type: string;
  zone_count: number;
  created_at: string;
  /** [w, s, e, n] of the zones (in the list only). */
  bbox?: Bbox | null;
}

/** An analysis in the list (GET /api/v2/analyses). */
export interface AnalysisEntry {
  name: string;
  uuid: string;
  status: string;
  progress: number;
  analysis_type: string;
  travel_mode_type: string;
  /** The road network it runs on. */
  country: string;
  created_at: string;
  /** The metrics that can be downloaded (empty until Data Available). */
  metrics: string[];
  /** The shapefiles (zips) that can be downloaded, like metrics (Data Available only). */
  shapefiles?: string[];
  /** The organization's tags this analysis carries. */
  tags: string[];
  failure_reason?: string;
}

/** A day type or day part of an analysis. */
export interface NamedSlice {
  name: string;
  code: string;
  /** As in the metric rows, e.g. `2: Peak AM (6am-10am)`. */
  label: string;
}

/** GET /api/v2/analyses/{uuid}: a list entry plus the parameters the analysis was created with. */
export interface AnalysisDetail extends AnalysisEntry {
  started_at: string | null;
  finished_at: string | null;
  output_type: string;
  country: string;
  oz_sets: { name: string; uuid: string }[];
  dz_sets: { name: string; uuid: string }[];
  date_ranges: UsRange[];
  day_types: NamedSlice[];
  day_parts: NamedSlice[];
  traveler_attributes: boolean;
  trip_attributes: boolean;
  unit_of_measurement: string;
  description: string | null;
  tags: string[];
  /** OD_Preset_Geography: the preset geography of the destinations. */
  geography_type?: string;
  /** Network_Performance: the figures reported (all, speed or travel_time). */
  metric_type?: string;
}

/** GET /api/v2/account. */
export interface Account {
  organization: { name: string };
  key: { prefix: string; label: string | null };
  users: { email: string }[];
}

/** The signed-in user of a web session (GET /auth/session, POST /auth/sign-in). */
export interface SessionInfo {
  user: { email: string; role: Role };
  organization: { name: string };
  csrf_token: string;
}

/** GET /api/v2/networks/{country}/places: a named street or place. */
export interface Place {
  name: string;
  point: [number, number];
  bbox: Bbox;
  segment_count: number;
  length_m: number;
  road_class: string;
}
