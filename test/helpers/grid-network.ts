import CheapRuler from "cheap-ruler";
import { Network } from "../../src/engine/network/network.js";
import {
  ACCESS_BIKE,
  ACCESS_CAR,
  ACCESS_FOOT,
  segmentIdOf,
  type LonLat,
  type RoadClass,
  type RoadType,
  type Segment,
} from "../../src/engine/network/types.js";

export interface GridOptions {
  /** Junctions per side (size × size). */
  size?: number;
  spacingM?: number;
  origin?: LonLat;
}

const SPEED: Partial<Record<RoadClass, number>> = {
  primary: 50,
  secondary: 40,
  residential: 30,
  pedestrian: 5,
};
const ROAD_TYPE: Partial<Record<RoadClass, RoadType>> = { primary: "Primary", secondary: "Secondary" };

/**
 * A hand-built street grid near Monaco for tests and benchmarks. Rows are
 * ways 1000+r, columns ways 2000+c, each cut into one segment per block.
 * Row size/2 and column size/3 are primary arterials, the last column is
 * secondary, row 2 is a eastbound oneway, and column size-3 between rows 3
 * and 6 is a pedestrian street (no cars). size 50 gives 4,900 segments.
 */
export function gridNetwork(opts: GridOptions = {}): Network {
  const size = opts.size ?? 10;
  const spacing = opts.spacingM ?? 150;
  const [lon0, lat0] = opts.origin ?? [7.41, 43.725];
  const ruler = new CheapRuler(lat0, "meters");
  const at = (r: number, c: number): LonLat => ruler.offset([lon0, lat0], c * spacing, r * spacing);
  const node = (r: number, c: number) => r * size + c + 1;
  const segments: Segment[] = [];
  const add = (
    wayId: number,
    index: number,
    roadClass: RoadClass,
    oneway: boolean,
    a: [number, number],
    b: [number, number],
  ) => {
    const coords = [at(...a), at(...b)];
    segments.push({
      id: segmentIdOf(wayId, index),
      wayId,
      index,
      roadClass,
      highway: roadClass,
      roadType: ROAD_TYPE[roadClass] ?? "Local",
      oneway,
      speedKph: SPEED[roadClass] ?? 30,
      name: `${roadClass} ${wayId}`,
      lengthM: ruler.lineDistance(coords),
      fromNode: node(...a),
      toNode: node(...b),
      access: roadClass === "pedestrian" ? ACCESS_FOOT | ACCESS_BIKE : ACCESS_CAR | ACCESS_BIKE | ACCESS_FOOT,
      coords,
    });
  };
  for (let r = 0; r < size; r++) {
    const cls: RoadClass = r === Math.floor(size / 2) ? "primary" : "residential";
    for (let c = 0; c + 1 < size; c++) add(1000 + r, c, cls, r === 2, [r, c], [r, c + 1]);
  }
  for (let c = 0; c < size; c++) {
    const cls: RoadClass =
      c === Math.floor(size / 3) ? "primary" : c === size - 1 ? "secondary" : "residential";
    for (let r = 0; r + 1 < size; r++) {
      const pedestrian = c === size - 3 && r >= 3 && r < 6;
      add(2000 + c, r, pedestrian ? "pedestrian" : cls, false, [r, c], [r + 1, c]);
    }
  }
  return new Network("zz", segments);
}
