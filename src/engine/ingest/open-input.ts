import { createReadStream } from "node:fs";
import { pipeline, Transform, type Readable } from "node:stream";
import { createGunzip } from "node:zlib";

/**
 * Bytes read at a time. A chunk's text lives until its trips are matched, and matching them allocates
 * several MB: at 64 KB (Node's default) most chunks outlived a young-generation collection and many were
 * promoted (~10 MB per 4,000-trip ingest, 1.6× the collectors' pauses); 16 KB halves that.
 */
const READ_CHUNK_BYTES = 16 * 1024;

/** What the file's bytes are handed to as they are read (before gunzip), e.g. to take its digest in the same pass. */
export type OnBytes = (bytes: Buffer) => void;

/**
 * A file's bytes as a stream, gunzipped on the fly when the name ends in `.gz`; `onBytes` sees the file's
 * own bytes as they are read. An error of any stage ends the returned stream with it.
 */
export function openInput(path: string, onBytes?: OnBytes): Readable {
  const raw = createReadStream(path, { highWaterMark: READ_CHUNK_BYTES });
  const stages: Transform[] = [];
  if (onBytes) stages.push(tap(onBytes));
  if (path.toLowerCase().endsWith(".gz")) stages.push(createGunzip());
  if (stages.length === 0) return raw;
  // An error of any stage reaches the reader through the last one, which pipeline destroys with it.
  pipeline([raw, ...stages], () => {});
  return stages[stages.length - 1];
}

function tap(onBytes: OnBytes): Transform {
  return new Transform({
    transform(bytes: Buffer, _encoding, done) {
      onBytes(bytes);
      done(null, bytes);
    },
  });
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
