/** shpjs ships no types: it parses a zipped shapefile into GeoJSON (one collection per layer). */
declare module "shpjs" {
  interface ShpFeatureCollection {
    type: "FeatureCollection";
    features: unknown[];
    fileName?: string;
  }
  export default function shp(
    input: ArrayBuffer | ArrayBufferView | string,
  ): Promise<ShpFeatureCollection | ShpFeatureCollection[]>;
}
