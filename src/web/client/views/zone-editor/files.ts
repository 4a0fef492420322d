/**
 * Zone files read in the browser: GeoJSON (.geojson/.json: a FeatureCollection, an array of Features or one
 * Feature) or a zipped shapefile (.zip, every layer, parsed by shpjs — pure JavaScript, no Node built-ins).
 * No DOM here, so the unit tests read the same files in Node.
 */
import type { Geometry } from "geojson";
import shp from "shpjs";
import { kindOf, type ZoneKind } from "./model.js";

/** A set holds at most this many zones (MAX_ZONES_PER_SET); larger files go through `streetflow zones upload`. */
export const MAX_FILE_ZONES = 7_000;

/** A file the editor cannot use, with a message for the person who chose it. */
export class ZoneFileError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

async function shapefileFeatures(name: string, bytes: ArrayBuffer): Promise<unknown[]> {
  try {
    const parsed = await shp(bytes);
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((layer) => layer.features);
  } catch {
    throw new ZoneFileError(
      `${name} could not be read as a zipped shapefile: the zip needs the .shp, .shx and .dbf files of a layer.`,
    );
  }
}

function geojsonFeatures(name: string, bytes: ArrayBuffer): unknown[] {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ZoneFileError(`${name} is not valid JSON.`);
  }
  if (Array.isArray(json)) return json;
  if (isObject(json) && json.type === "FeatureCollection" && Array.isArray(json.features))
    return json.features;
  if (isObject(json) && json.type === "Feature") return [json];
  throw new ZoneFileError(`${name} holds no GeoJSON features (expected a FeatureCollection).`);
}

/** The features of a zone file, by its name's extension. */
export async function readZoneFile(name: string, bytes: ArrayBuffer): Promise<unknown[]> {
  const ext = /\.[^.]+$/.exec(name.toLowerCase())?.[0];
  if (ext === ".zip") return shapefileFeatures(name, bytes);
  if (ext === ".geojson" || ext === ".json") return geojsonFeatures(name, bytes);
  throw new ZoneFileError(`${name}: choose a .geojson or .json file, or a zipped shapefile (.zip).`);
}

export interface LoadedZone {
  geometry: Geometry;
  properties: Record<string, unknown>;
}

export interface SortedFeatures {
  kind: ZoneKind;
  zones: LoadedZone[];
  /** How many features were left out, and why, in one sentence; null when none were. */
  skipped: string | null;
}

/**
 * The file's zones of the set's kind (or, for an empty set, of the first zone's kind). Features without a
 * polygon or line geometry, or of the other kind, are left out and counted; the rest are checked on save.
 */
export function sortFeatures(features: unknown[], setKind: ZoneKind | null): SortedFeatures {
  if (features.length === 0) throw new ZoneFileError("The file has no features.");
  if (features.length > MAX_FILE_ZONES)
    throw new ZoneFileError(
      `The file has ${features.length.toLocaleString("en-US")} features; a zone set holds at most ` +
        `${MAX_FILE_ZONES.toLocaleString("en-US")}. Split it with \`streetflow zones upload\`.`,
    );
  const geometryOf = (f: unknown) => (isObject(f) ? (f.geometry as Geometry | null) : null);
  const kind = setKind ?? features.map((f) => kindOf(geometryOf(f))).find((k) => k !== null);
  if (!kind) throw new ZoneFileError("The file has no polygons or lines.");
  const zones: LoadedZone[] = [];
  let noGeometry = 0;
  let otherKind = 0;
  for (const f of features) {
    const geometry = geometryOf(f);
    const k = kindOf(geometry);
    if (k === null) noGeometry++;
    else if (k !== kind) otherKind++;
    else
      zones.push({
        geometry: geometry!,
        properties: isObject(f) && isObject(f.properties) ? f.properties : {},
      });
  }
  const reasons = [
    noGeometry && `${noGeometry} without a polygon or line geometry`,
    otherKind &&
      `${otherKind} ${kind === "polygon" ? "line" : "polygon"} feature${otherKind === 1 ? "" : "s"} (a set holds ${kind === "polygon" ? "polygons" : "lines"} only)`,
  ].filter(Boolean);
  const skipped = reasons.length ? `Left out: ${reasons.join(", ")}.` : null;
  if (zones.length === 0) throw new ZoneFileError(`No zone could be loaded. ${skipped ?? ""}`.trim());
  return { kind, zones, skipped };
}
