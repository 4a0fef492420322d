import { createReadStream } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { createGunzip } from "node:zlib";

/**
 * Text handed on at a time. A piece's text lives until its trips are matched, and matching them allocates
 * several MB: at 64 KB (Node's default) most pieces outlived a young-generation collection and many were
 * promoted (~10 MB per 4,000-trip ingest, 1.6× the collectors' pauses); 16 KB halves that.
 */
const TEXT_PIECE_BYTES = 16 * 1024;

/**
 * Bytes read at a time, decoded TEXT_PIECE_BYTES at a time (the buffer is outside V8's heap). Each read
 * costs ~45 µs of CPU in the stream and the thread pool: read 16 KB at a time, a 5 MB file took 14–21 ms to
 * read, against ~3 ms in reads of 256 KB.
 */
const READ_BYTES = 256 * 1024;

/** What the file's bytes are handed to as they are read (before gunzip), e.g. to take its digest in the same pass. */
export type OnBytes = (bytes: Buffer) => void;

/**
 * A file's text, a chunk at a time, gunzipped on the fly when the name ends in `.gz`; `onBytes` sees the
 * file's own bytes as they are read. A read or gunzip error ends the iteration with it. (A Transform stream
 * to show the bytes cost ~20 µs per chunk in its callbacks and ticks; this costs a generator step.)
 */
export async function* readText(path: string, onBytes?: OnBytes): AsyncGenerator<string> {
  const raw = createReadStream(path, { highWaterMark: READ_BYTES });
  const decoder = new StringDecoder("utf8");
  try {
    if (isGzipped(path)) {
      // Piped, the file stream flows: its "data" events are the file's bytes, whatever gunzip makes of them.
      if (onBytes) raw.on("data", (bytes) => onBytes(bytes as Buffer));
      const gunzip = createGunzip();
      raw.on("error", (e) => gunzip.destroy(e));
      for await (const bytes of raw.pipe(gunzip)) yield* pieces(decoder, bytes as Buffer);
    } else
      for await (const bytes of raw) {
        onBytes?.(bytes as Buffer);
        yield* pieces(decoder, bytes as Buffer);
      }
    const rest = decoder.end();
    if (rest) yield rest;
  } finally {
    // A reader that stops early (a CSV without its columns, malformed XML) closes the file here.
    raw.destroy();
  }
}

/** Whether the file is read gunzipped: its name ends in `.gz`, in any case. */
export function isGzipped(path: string): boolean {
  return path.toLowerCase().endsWith(".gz");
}

/** `bytes` decoded TEXT_PIECE_BYTES at a time (a character split between pieces waits in the decoder). */
function* pieces(decoder: StringDecoder, bytes: Buffer): Generator<string> {
  for (let at = 0; at < bytes.length; at += TEXT_PIECE_BYTES)
    yield decoder.write(bytes.subarray(at, at + TEXT_PIECE_BYTES));
}

/** The format a file name announces, ignoring a trailing `.gz`. */
export type TraceFormat = "csv" | "gpx" | "geojson";

export function formatOf(path: string): TraceFormat | null {
  const lower = path.toLowerCase();
  const name = isGzipped(path) ? lower.slice(0, -".gz".length) : lower;
  if (name.endsWith(".csv")) return "csv";
  if (name.endsWith(".gpx")) return "gpx";
  if (name.endsWith(".geojson") || name.endsWith(".json")) return "geojson";
  return null;
}
