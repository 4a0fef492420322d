import { ACCESS_FOOT, type Segment } from "../../src/engine/network/types.js";
import { seg } from "./network.js";

/** Way ids of the grid: rows (horizontal streets) 10..14 at y = 0..400, columns 20..24 at x = 0..400. */
export const rowWay = (y: number) => 10 + y / 100;
export const colWay = (x: number) => 20 + x / 100;
/** Segment id of piece `i` (0..3, each 100 m) of a row or column. */
export const rowSeg = (y: number, i: number) => rowWay(y) * 10_000 + i;
export const colSeg = (x: number, i: number) => colWay(x) * 10_000 + i;
/** A footway across the south-west block and a motorway 1 km east. */
export const FOOTWAY = 990_000;
export const MOTORWAY = 980_000;

/**
 * A 400 m × 400 m street grid of 100 m blocks (40 segments): the row at y = 200
 * is primary, the column at x = 200 secondary, the rest residential; plus a
 * foot-only diagonal and a distant motorway.
 */
export function gridNetwork(): Segment[] {
  const segments: Segment[] = [];
  const node = (x: number, y: number) => 1000 + (x / 100) * 10 + y / 100;
  for (let k = 0; k <= 4; k++) {
    const line = k * 100;
    for (let i = 0; i < 4; i++) {
      const [a, b] = [i * 100, (i + 1) * 100];
      const rowClass = line === 200 ? { roadClass: "primary" as const, highway: "primary" } : {};
      const colClass = line === 200 ? { roadClass: "secondary" as const, highway: "secondary" } : {};
      segments.push(
        seg(
          rowWay(line),
          i,
          node(a, line),
          node(b, line),
          [
            [a, line],
            [b, line],
          ],
          rowClass,
        ),
        seg(
          colWay(line),
          i,
          node(line, a),
          node(line, b),
          [
            [line, a],
            [line, b],
          ],
          colClass,
        ),
      );
    }
  }
  segments.push(
    seg(
      99,
      0,
      5001,
      5002,
      [
        [50, 50],
        [150, 150],
      ],
      { roadClass: "footway", highway: "footway", access: ACCESS_FOOT },
    ),
    seg(
      98,
      0,
      5003,
      5004,
      [
        [1000, 0],
        [1100, 0],
      ],
      { roadClass: "motorway", highway: "motorway" },
    ),
  );
  return segments;
}
