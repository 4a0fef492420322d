/**
 * Small GeoJSON shapes both the web client and the server's tests and benches draw, with no imports so
 * every layer may use them.
 */

/** The closed ring (counter-clockwise, first position repeated) of the box [west, south, east, north]. */
export function boxRing([w, s, e, n]: readonly number[]): [number, number][] {
  return [
    [w, s],
    [e, s],
    [e, n],
    [w, n],
    [w, s],
  ];
}

/** A GeoJSON Polygon covering the box [west, south, east, north]. */
export const boxPolygon = (bounds: readonly number[]) => ({
  type: "Polygon" as const,
  coordinates: [boxRing(bounds)],
});
