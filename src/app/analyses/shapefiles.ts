import shpwrite from "@mapbox/shp-write";
import JSZip from "jszip";
import type { Store } from "../ports/store.js";
import type { StoredAnalysis, ZoneFeature } from "../../domain/records.js";
import { fail } from "../../domain/errors.js";
import type { AnalysisSpec, ZoneSetRef } from "../../domain/analyses/spec.js";
import { ROUTES_RESULT, ROUTES_SHAPEFILE, type StoredRoutes } from "./top-routes-metrics.js";

/** WGS84, as every zone is stored. */
const WGS84_PRJ =
  'GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137,298.257223563]],' +
  'PRIMEM["Greenwich",0],UNIT["Degree",0.017453292519943295]]';

/** The columns every shapefile starts with, as the vendor's shapefiles have them. */
const BASE_COLUMNS = ["id", "name", "direction", "is_pass", "is_bidi"];

/** Which zone sets of the analysis each offered shapefile holds, by shapefile name. */
function shapefileSets(spec: AnalysisSpec): Record<string, ZoneSetRef[]> {
  const sides: [string, ZoneSetRef[] | undefined][] = [
    ["origin_zones", spec.originSets],
    ["destination_zones", spec.destinationSets],
    ["middle_filter_zones", spec.middleFilterSets],
  ];
  return Object.fromEntries(sides.filter(([, sets]) => sets && sets.length > 0)) as Record<
    string,
    ZoneSetRef[]
  >;
}

/** Types whose results include routes, offered as the `top_routes` line shapefile. */
const ROUTE_TYPES = ["Top_Routes_OD", "Top_Routes_ZA"];

/**
 * Names of the shapefiles an analysis offers: one per side with zone sets (lines for line zone sets),
 * and the routes of a top-routes analysis.
 */
export const shapefileNames = (spec: AnalysisSpec): string[] => [
  ...Object.keys(shapefileSets(spec)),
  ...(ROUTE_TYPES.includes(spec.analysisType) ? [ROUTES_SHAPEFILE] : []),
];

/**
 * dBase text is written one byte per character: UTF-8 bytes as characters keep
 * every name intact, and the .cpg file tells readers the encoding.
 */
const utf8Bytes = (text: string) => String.fromCharCode(...new TextEncoder().encode(text));

/** A zone's attribute row: the base columns first, then the zone's other properties. */
function attributes(f: ZoneFeature, columns: string[]): Record<string, string | number> {
  const row: Record<string, string | number> = {};
  for (const column of columns) {
    const v = f.properties[column];
    row[column] =
      typeof v === "number" ? v : typeof v === "boolean" ? Number(v) : v == null ? "" : utf8Bytes(String(v));
  }
  return row;
}

/** Properties of the zones beyond the base columns; nested values are left out. */
function extraColumns(features: ZoneFeature[]): string[] {
  const seen = new Set<string>();
  for (const f of features)
    for (const [key, v] of Object.entries(f.properties))
      if (!BASE_COLUMNS.includes(key) && (v === null || typeof v !== "object")) seen.add(key);
  return [...seen];
}

type ShapeType = "POLYGON" | "POLYLINE";

/** shp-write's geometry list: per record, its rings (polygons) or its lines (polylines). */
function geometryOf(f: ZoneFeature): { type: ShapeType; parts: unknown } {
  const { type, coordinates } = f.geometry;
  if (type === "Polygon") return { type: "POLYGON", parts: coordinates };
  if (type === "MultiPolygon") return { type: "POLYGON", parts: (coordinates as unknown[][]).flat() };
  if (type === "LineString") return { type: "POLYLINE", parts: [coordinates] };
  if (type === "MultiLineString") return { type: "POLYLINE", parts: coordinates };
  throw new Error(`a zone of geometry type ${type} cannot be written to a shapefile`);
}

function writeLayer(rows: object[], type: ShapeType, geometries: unknown[]) {
  return new Promise<{ shp: DataView; shx: DataView; dbf: DataView }>((resolve, reject) =>
    shpwrite.write(rows, type, geometries as object[], (err, files) => (err ? reject(err) : resolve(files))),
  );
}

/**
 * The zones as a zipped shapefile: `<name>.shp/.shx/.dbf/.prj/.cpg`, one layer
 * per geometry kind (a set of polygons and lines gives `<name>_lines` too).
 */
export async function zonesShapefileZip(name: string, features: ZoneFeature[]): Promise<Buffer> {
  const columns = [...BASE_COLUMNS, ...extraColumns(features)];
  const zip = new JSZip();
  const layers: Record<ShapeType, { rows: object[]; geometries: unknown[] }> = {
    POLYGON: { rows: [], geometries: [] },
    POLYLINE: { rows: [], geometries: [] },
  };
  for (const f of features) {
    const { type, parts } = geometryOf(f);
    layers[type].rows.push(attributes(f, columns));
    layers[type].geometries.push(parts);
  }
  const polygonsToo = layers.POLYGON.rows.length > 0;
  for (const type of ["POLYGON", "POLYLINE"] as const) {
    const { rows, geometries } = layers[type];
    if (rows.length === 0) continue;
    const file = type === "POLYLINE" && polygonsToo ? `${name}_lines` : name;
    const written = await writeLayer(rows, type, geometries);
    for (const ext of ["shp", "shx", "dbf"] as const)
      zip.file(`${file}.${ext}`, new Uint8Array(written[ext].buffer));
    zip.file(`${file}.prj`, WGS84_PRJ);
    zip.file(`${file}.cpg`, "UTF-8");
  }
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

/**
 * The routes of a top-routes analysis as a polyline shapefile: one record per row of the mode's main
 * metric (route, zones, day type and part, rank, traffic, share, length, time), drawn along the route's
 * representative path on the country's network.
 */
async function routesShapefileZip(store: Store, a: StoredAnalysis): Promise<Buffer> {
  const stored = await store.analyses.result(a.uuid, ROUTES_RESULT);
  const { columns, routes, records } = JSON.parse(
    stored ?? '{"columns":[],"routes":{},"records":[]}',
  ) as StoredRoutes;
  const coordsById = new Map((await store.network.loadSegments(a.spec.country)).map((s) => [s.id, s.coords]));
  const lineOf = (signedIds: number[]) =>
    signedIds.flatMap((signed, k) => {
      const coords = coordsById.get(Math.abs(signed)) ?? [];
      const along = signed > 0 ? coords : [...coords].reverse();
      return k === 0 ? along : along.slice(1);
    });
  const lines = new Map(Object.entries(routes).map(([id, ids]) => [id, lineOf(ids)]));
  const features: ZoneFeature[] = records.map(([route, ...values]) => ({
    type: "Feature",
    geometry: { type: "LineString", coordinates: lines.get(String(route)) ?? [] },
    properties: Object.fromEntries([
      ["route_id", route],
      ...columns.map((c, i) => [c, values[i]]),
    ]) as ZoneFeature["properties"],
  }));
  return routesZip(features, ["route_id", ...columns]);
}

/** Route records as one POLYLINE layer `top_routes`, their own columns only. */
async function routesZip(features: ZoneFeature[], columns: string[]): Promise<Buffer> {
  const zip = new JSZip();
  const drawn = features.filter((f) => (f.geometry.coordinates as unknown[]).length >= 2);
  const written = await writeLayer(
    drawn.map((f) => attributes(f, columns)),
    "POLYLINE",
    drawn.map((f) => [f.geometry.coordinates]),
  );
  for (const ext of ["shp", "shx", "dbf"] as const)
    zip.file(`${ROUTES_SHAPEFILE}.${ext}`, new Uint8Array(written[ext].buffer));
  zip.file(`${ROUTES_SHAPEFILE}.prj`, WGS84_PRJ);
  zip.file(`${ROUTES_SHAPEFILE}.cpg`, "UTF-8");
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

/** A shapefile the analysis offers, zipped; 404 naming the offered ones for another name. */
export async function analysisShapefile(store: Store, a: StoredAnalysis, shapefile: string): Promise<Buffer> {
  if (shapefile === ROUTES_SHAPEFILE && shapefileNames(a.spec).includes(shapefile))
    return routesShapefileZip(store, a);
  const sets = shapefileSets(a.spec)[shapefile];
  if (!sets)
    throw fail(
      "unknown_shapefile",
      { analysis: a.name, shapefile, available: shapefileNames(a.spec).join(", ") },
      "shapefile",
    );
  const features = [];
  for (const ref of sets) {
    const set = await store.zoneSets.get(a.orgId, ref.uuid);
    if (!set) throw fail("zone_set_deleted", { zone_set: ref.name });
    features.push(...set.featureCollection.features);
  }
  return zonesShapefileZip(shapefile, features);
}
