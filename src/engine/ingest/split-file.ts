import { basename } from "node:path";
import type { RawTrip, TraceSource, VehicleClass } from "../trips/types.js";
import { readTraceFile } from "./read-traces.js";
import { TripSplitter, type SplitCounts } from "./split-trips.js";
import { formatProblem } from "./types.js";

export interface SplitFileOptions {
  source: TraceSource;
  vehicleClass: VehicleClass;
  /** Row problems, formatted `file:line: message`. */
  onProblem?: (message: string) => void;
  /** Called about every `progressEvery` points read. */
  onProgress?: (counts: SplitCounts) => void;
  progressEvery?: number;
  /** Stops reading when aborted; the trips still open are dropped (as ingestTraceFile does). */
  signal?: AbortSignal;
}

/** What reading and splitting one file counted (the splitter's counts, bad rows, read errors). */
export interface SplitFileCounts extends SplitCounts {
  readErrors: number;
  interrupted: number;
}

/**
 * Reads one trace file and splits it into trips with one TripSplitter over the whole file, yielding the
 * trips as they close: the same raw trips, in the same order, as ingestTraceFile matches. A distributed
 * ingest cuts them into chunks for other processes to match; `counts` is filled as reading goes.
 */
export async function* splitTraceFile(
  path: string,
  opts: SplitFileOptions,
  counts: SplitFileCounts,
): AsyncGenerator<RawTrip[]> {
  const progressEvery = opts.progressEvery ?? 100_000;
  const splitter = new TripSplitter({ source: opts.source, defaultVehicleClass: opts.vehicleClass });
  const sync = () => Object.assign(counts, splitter.counts, { badRows: counts.badRows });
  try {
    for await (const records of readTraceFile(path)) {
      const closed: RawTrip[] = [];
      for (const record of records) {
        if (opts.signal?.aborted) break;
        if (record.problem) {
          counts.badRows++;
          opts.onProblem?.(formatProblem(record.problem));
          continue;
        }
        closed.push(...splitter.push(record.point));
        if (splitter.counts.pointsRead % progressEvery === 0) opts.onProgress?.(sync());
      }
      if (closed.length > 0) yield closed;
      if (opts.signal?.aborted) break;
    }
  } catch (e) {
    counts.readErrors++;
    opts.onProblem?.(`${basename(path)}: reading stopped: ${(e as Error).message}`);
  }
  if (opts.signal?.aborted) counts.interrupted = 1;
  else yield splitter.flush();
  sync();
}
