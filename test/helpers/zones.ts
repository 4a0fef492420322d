import { boxPolygon } from "../../src/shared/geometry.js";

/** A polygon zone feature covering the box [west, south, east, north] in degrees. */
export const boxFeature = (name: string, id: number, bounds: number[]) => ({
  type: "Feature",
  properties: { name, id },
  geometry: boxPolygon(bounds),
});

/** Three Monaco districts the demo trips run between: an analysis over them has flows in every demo month. */
export const monacoDistricts = () => [
  boxFeature("Monte-Carlo", 1, [7.423, 43.737, 7.433, 43.744]),
  boxFeature("Fontvieille", 2, [7.412, 43.727, 7.42, 43.733]),
  boxFeature("Condamine", 3, [7.415, 43.733, 7.424, 43.738]),
];
