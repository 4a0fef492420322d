/** osmtogeojson ships no types: it turns OSM JSON (elements) into a GeoJSON FeatureCollection. */
declare module "osmtogeojson" {
  interface OsmToGeoJsonFeature {
    type: "Feature";
    id: string;
    geometry: { type: string; coordinates: unknown };
    properties: Record<string, unknown>;
  }
  interface OsmToGeoJsonOptions {
    flatProperties?: boolean;
    verbose?: boolean;
  }
  export default function osmtogeojson(
    data: { elements: unknown[] },
    options?: OsmToGeoJsonOptions,
  ): { type: "FeatureCollection"; features: OsmToGeoJsonFeature[] };
}
