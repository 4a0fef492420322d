/** Joins a counts answer with the road names into what the map and the table show (no DOM). */
import type { LonLat } from "./query.js";
import { classOf } from "./scale.js";
import type { SegmentRow } from "./sort.js";

export interface SegmentMetrics {
  segment_id: number;
  trips_volume: number;
  vmt: number;
  avg_speed: number | null;
  road_class: string;
}

export interface CountsResult {
  /** Segments with data in the month, closest to the place first (the API's order). */
  metrics: SegmentMetrics[];
  /** Every selected segment's line, with or without data. */
  lines: Map<number, LonLat[]>;
}

/** Properties of a drawn segment; `cls` is its volume class (-1 without trips in the month). */
export interface DrawnSegment {
  segment_id: number;
  cls: number;
  name: string | null;
  road_class: string;
  trips_volume: number | null;
  vmt: number | null;
  avg_speed: number | null;
}

/** Name and class of a road segment, from the network endpoint (the counts interface answers neither). */
export type RoadInfo = Map<number, { name: string | null; road_class: string }>;

/** Every selected line with its month's values (when it has trips) and volume class; high classes last. */
export function drawnSegments(
  result: CountsResult,
  roads: RoadInfo,
  breaks: readonly number[],
): { line: LonLat[]; props: DrawnSegment }[] {
  const metrics = new Map(result.metrics.map((m) => [m.segment_id, m]));
  const drawn = [...result.lines].map(([id, line]) => {
    const m = metrics.get(id);
    const road = roads.get(id);
    return {
      line,
      props: {
        segment_id: id,
        cls: m ? classOf(m.trips_volume, breaks) : -1,
        name: road?.name ?? null,
        road_class: m?.road_class ?? road?.road_class ?? "road",
        trips_volume: m?.trips_volume ?? null,
        vmt: m?.vmt ?? null,
        avg_speed: m?.avg_speed ?? null,
      },
    };
  });
  return drawn.sort((a, b) => a.props.cls - b.props.cls);
}

/** The table's rows: the segments with trips, named. */
export const segmentRows = (result: CountsResult, roads: RoadInfo): SegmentRow[] =>
  result.metrics.map((m) => ({ ...m, name: roads.get(m.segment_id)?.name ?? null }));
