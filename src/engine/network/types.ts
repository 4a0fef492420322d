/** Position as GeoJSON orders it: [longitude, latitude]. */
export type LonLat = [number, number];

// Road classes are shared vocabulary (the web client draws them): src/shared holds the list.
import type { RoadClass } from "../../shared/vocabulary.js";
export { ROAD_CLASSES, type RoadClass } from "../../shared/vocabulary.js";

/** The vendor interface's coarse road type of a line zone. */
export type RoadType = "Primary" | "Secondary" | "Local" | "Ramp";

/** Who may travel on a segment (bit mask). */
export const ACCESS_CAR = 1;
export const ACCESS_BIKE = 2;
export const ACCESS_FOOT = 4;

export interface Segment {
  /** Stable id: OSM way id × SEGMENT_ID_FACTOR + piece index within the way. */
  id: number;
  wayId: number;
  /** Piece of the way, counted from 0 along the way's node order. */
  index: number;
  roadClass: RoadClass;
  /** Raw OSM `highway` value, kept because `roadClass` folds links into `ramp`. */
  highway: string;
  roadType: RoadType;
  /** True when travel is allowed only along the stored geometry's direction. */
  oneway: boolean;
  speedKph: number;
  name: string | null;
  lengthM: number;
  /** OSM node ids of the first and last vertex: the junctions the segment joins. */
  fromNode: number;
  toNode: number;
  access: number;
  coords: LonLat[];
}

/** Room for this many pieces per way in a segment id; far above any real way. */
export const SEGMENT_ID_FACTOR = 10_000;

export function segmentIdOf(wayId: number, index: number): number {
  return wayId * SEGMENT_ID_FACTOR + index;
}

/**
 * A line of the transit layer, imported beside the road network: a rail line (one
 * `railway=rail|light_rail|subway|tram` way, with its own geometry: trains run on no road
 * segment) or a bus route (a `route=bus` relation, running on the road ways it lists).
 */
export interface TransitRoute {
  kind: "bus" | "rail";
  /** The rail way's id, or the bus route relation's id. */
  osmId: number;
  /** `railway` value of a rail line (rail, light_rail, subway, tram); `bus` for a bus route. */
  service: string;
  name: string | null;
  ref: string | null;
  /** Ways travelled, in the relation's order (a rail line: its own way). */
  wayIds: number[];
  /** A rail line's geometry; empty for a bus route, whose geometry is its ways' road segments. */
  coords: LonLat[];
}
