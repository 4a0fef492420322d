import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";

/** A file's bytes as a stream, gunzipped on the fly when the name ends in `.gz`. */
export function openInput(path: string): Readable {
  const raw = createReadStream(path);
  if (!path.toLowerCase().endsWith(".gz")) return raw;
  const gunzip = createGunzip();
  raw.on("error", (e) => gunzip.destroy(e));
  return raw.pipe(gunzip);
}

/** The format a file name announces, ignoring a trailing `.gz`. */
export type TraceFormat = "csv" | "gpx" | "geojson";

export function formatOf(path: string): TraceFormat | null {
  const name = path.toLowerCase().replace(/\.gz$/, "");
  if (name.endsWith(".csv")) return "csv";
  if (name.endsWith(".gpx")) return "gpx";
  if (name.endsWith(".geojson") || name.endsWith(".json")) return "geojson";
  return null;
}
