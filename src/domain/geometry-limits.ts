/**
 * The one cap on the size of any geometry a request sends (zone geometries, counts polygon selectors,
 * osm_ids search polygons): 10,000 positions in all, counting every ring and part. Selection and zone
 * assignment cost grows with the positions, so a bigger shape could hold the process for seconds.
 */
export const MAX_GEOMETRY_POSITIONS = 10_000;

/**
 * Positions in GeoJSON coordinates of any nesting (a position is an array starting with a number).
 * Stops counting past the cap, so a huge body costs no more than the cap to reject.
 */
export function countPositions(coordinates: unknown, depth = 0): number {
  if (!Array.isArray(coordinates) || depth > 4) return 0;
  if (typeof coordinates[0] === "number") return 1;
  let count = 0;
  for (const part of coordinates) {
    count += countPositions(part, depth + 1);
    if (count > MAX_GEOMETRY_POSITIONS) break;
  }
  return count;
}

/** The reason a geometry is refused, or null when it is within the cap. */
export function positionCapProblem(coordinates: unknown): string | null {
  const count = countPositions(coordinates);
  return count > MAX_GEOMETRY_POSITIONS
    ? `has more than ${MAX_GEOMETRY_POSITIONS.toLocaleString("en-US")} positions; simplify the geometry`
    : null;
}
