/** A polygon zone feature covering the box [west, south, east, north] in degrees. */
export const boxFeature = (name: string, id: number, [w, s, e, n]: number[]) => ({
  type: "Feature",
  properties: { name, id },
  geometry: {
    type: "Polygon",
    coordinates: [
      [
        [w, s],
        [e, s],
        [e, n],
        [w, n],
        [w, s],
      ],
    ],
  },
});
