import type { LonLat } from "../network/types.js";

/** Side of a grid cell, metres. */
export const GRID_CELL_M = 500;
/** Degrees of latitude per cell: 500 m on the WGS84 mean sphere. */
const CELL_LAT_DEG = GRID_CELL_M / 111_195;

export interface GridCell {
  /** `<row>_<col>`: stable across analyses, so cells of two analyses compare. */
  id: string;
  /** West, south, east, north in degrees (6 decimals). */
  bounds: [number, number, number, number];
}

/**
 * A world-wide grid of ~500 m × 500 m cells: rows of 500 m of latitude from the equator, each row cut
 * into columns 500 m wide at the row's middle latitude (so a cell is square wherever it lies, and the
 * columns of neighbouring rows do not line up, which nothing here needs).
 */
export function gridCellOf(p: LonLat): GridCell {
  const row = Math.floor(p[1] / CELL_LAT_DEG);
  const lonDeg = columnWidthDeg(row);
  const col = Math.floor(p[0] / lonDeg);
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    id: `${row}_${col}`,
    bounds: [r6(col * lonDeg), r6(row * CELL_LAT_DEG), r6((col + 1) * lonDeg), r6((row + 1) * CELL_LAT_DEG)],
  };
}

function columnWidthDeg(row: number): number {
  const middle = ((row + 0.5) * CELL_LAT_DEG * Math.PI) / 180;
  return CELL_LAT_DEG / Math.max(0.01, Math.cos(middle));
}
