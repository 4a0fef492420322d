import { basename } from "node:path";
import { readCsvTrace } from "./csv-reader.js";
import { readGeoJsonTrace } from "./geojson-reader.js";
import { readGpxTrace } from "./gpx-reader.js";
import { formatOf, type OnBytes } from "./open-input.js";
import type { TraceBatch, TraceRecord } from "./types.js";

export const TRACE_FILE_KINDS = ".csv, .gpx, .geojson/.json, each optionally .gz";

/**
 * Streams a trace file's points and bad rows in batches (in file order), choosing the reader by file name.
 * Iterate a batch (or hand it a sink) before asking for the next one: a CSV batch reads its rows as it is
 * iterated. `onBytes` sees the file's own bytes as they are read.
 */
export function readTraceFile(path: string, onBytes?: OnBytes): AsyncGenerator<TraceBatch> {
  const format = formatOf(path);
  if (format === "csv") return readCsvTrace(path, onBytes);
  if (format === "gpx") return readGpxTrace(path, onBytes);
  if (format === "geojson") return readGeoJsonTrace(path, onBytes);
  return unknownFormat(path);
}

async function* unknownFormat(path: string): AsyncGenerator<TraceRecord[]> {
  yield [
    {
      problem: {
        file: basename(path),
        line: 0,
        message: `unknown trace format; expected ${TRACE_FILE_KINDS}`,
      },
    },
  ];
}
