/** Position as GeoJSON orders it: [longitude, latitude]. */
export type LonLat = [number, number];

/** Road classes Streetflow reports; every `*_link` highway becomes `ramp`. */
export const ROAD_CLASSES = [
  "motorway",
  "trunk",
  "primary",
  "secondary",
  "tertiary",
  "unclassified",
  "residential",
  "living_street",
  "service",
  "ramp",
  "track",
  "road",
  "pedestrian",
  "footway",
  "cycleway",
  "path",
  "steps",
] as const;
export type RoadClass = (typeof ROAD_CLASSES)[number];

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
