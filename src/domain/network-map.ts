import { fail } from "./errors.js";
import type { NetworkRegistry } from "../engine/network/registry.js";
import { ROAD_CLASSES, type LonLat, type Segment } from "../engine/network/types.js";

/** Most segments one map request returns; a browser draws this many GeoJSON lines smoothly. */
export const MAX_MAP_SEGMENTS = 20_000;

export type Bbox = [west: number, south: number, east: number, north: number];

export interface NetworkSummary {
  country: string;
  segmentCount: number;
  importedAt: string;
  timeZone: string;
  bbox: Bbox;
  /** `YYYY-MM` of the latest month with stored trips (any vehicle class); null without trips. */
  lastTripMonth: string | null;
}

export interface SegmentFeature {
  type: "Feature";
  geometry: { type: "LineString"; coordinates: LonLat[] };
  properties: { segment_id: number; road_class: string; name: string | null };
}

export interface SegmentsInBox {
  features: SegmentFeature[];
  /** Segments meeting the box; more than `features.length` when the cap cut the answer. */
  total: number;
  truncated: boolean;
}

/** `w,s,e,n` in degrees, west ≤ east and south ≤ north (boxes across the antimeridian are not supported). */
export function parseBbox(text: string): Bbox {
  const parts = text.split(",").map((p) => (p.trim() === "" ? NaN : Number(p)));
  const invalid = (why: string) => fail("invalid_bbox", { reason: why }, "bbox");
  if (parts.length !== 4 || parts.some((v) => !Number.isFinite(v)))
    throw invalid("must be four numbers west,south,east,north");
  const [w, s, e, n] = parts;
  if (w < -180 || e > 180 || s < -90 || n > 90) throw invalid("must lie within -180..180, -90..90");
  if (w > e || s > n) throw invalid("must have west <= east and south <= north");
  return [w, s, e, n];
}

const classRank = new Map<string, number>(ROAD_CLASSES.map((c, i) => [c, i]));

/**
 * Segments whose bounding box meets `bbox` (the whole network when absent). Over the cap, the most
 * important road classes are kept, so a zoomed-out map still shows the main roads.
 */
export async function segmentsInBox(
  networks: NetworkRegistry,
  country: string,
  bbox: Bbox | null,
  cap = MAX_MAP_SEGMENTS,
): Promise<SegmentsInBox> {
  const network = await networks.get(country);
  if (!network) throw fail("unknown_country", { country }, "country");
  const [w, s, e, n] = bbox ?? network.bbox;
  const found = network.searchBox(w, s, e, n).map((i) => network.segments[i]);
  found.sort((a, b) => classRank.get(a.roadClass)! - classRank.get(b.roadClass)! || a.id - b.id);
  const kept = found.slice(0, cap);
  return { features: kept.map(featureOf), total: found.length, truncated: kept.length < found.length };
}

function featureOf(s: Segment): SegmentFeature {
  return {
    type: "Feature",
    geometry: { type: "LineString", coordinates: s.coords },
    properties: { segment_id: s.id, road_class: s.roadClass, name: s.name },
  };
}
