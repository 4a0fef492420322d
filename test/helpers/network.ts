import CheapRuler from "cheap-ruler";
import {
  ACCESS_BIKE,
  ACCESS_CAR,
  ACCESS_FOOT,
  segmentIdOf,
  type LonLat,
  type Segment,
} from "../../src/engine/network/types.js";

/** Origin of hand-built test networks (Monaco), so metres convert to lon/lat realistically. */
export const ORIGIN: LonLat = [7.42, 43.73];
const ruler = new CheapRuler(ORIGIN[1], "meters");

/** [x, y] metres east/north of ORIGIN → [lon, lat]. */
export function at(x: number, y: number): LonLat {
  return ruler.offset(ORIGIN, x, y) as LonLat;
}

/** A hand-built segment; coordinates in metres from ORIGIN, nodes are any distinct integers. */
export function seg(
  wayId: number,
  index: number,
  fromNode: number,
  toNode: number,
  pointsM: [number, number][],
  extra: Partial<Segment> = {},
): Segment {
  const coords = pointsM.map(([x, y]) => at(x, y));
  return {
    id: segmentIdOf(wayId, index),
    wayId,
    index,
    roadClass: "residential",
    highway: "residential",
    roadType: "Local",
    oneway: false,
    speedKph: 30,
    name: `Way ${wayId}`,
    lengthM: ruler.lineDistance(coords),
    fromNode,
    toNode,
    access: ACCESS_CAR | ACCESS_BIKE | ACCESS_FOOT,
    coords,
    ...extra,
  };
}
