import { basename } from "node:path";
import type { GpsPoint, RawTrip, TraceSource, TripPurpose, VehicleClass } from "../trips/types.js";
import type { OnBytes } from "./open-input.js";
import { readTraceFile } from "./read-traces.js";
import { TripSplitter, type SplitCounts } from "./split-trips.js";
import { formatProblem, handRecord, type RowProblem, type TraceRowSink } from "./types.js";

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
  /** Sees the file's own bytes as they are read (its digest is taken in the same pass). */
  onBytes?: OnBytes;
}

/** What reading counts besides the splitter: bad rows, a read that stopped part-way, an interrupted one. */
export interface ReadCounts {
  badRows: number;
  readErrors: number;
  interrupted: number;
}

/** What reading and splitting one file counted (the splitter's counts, bad rows, read errors). */
export interface SplitFileCounts extends SplitCounts, ReadCounts {}

export interface ReadTripsOptions {
  onProblem?: (message: string) => void;
  /** Called every `progressEvery` points read (default 100,000), after the trips they closed were taken. */
  onProgress?: () => void;
  progressEvery?: number;
  signal?: AbortSignal;
  onBytes?: OnBytes;
}

/**
 * The reading loop of every ingest: reads one trace file through `splitter` and yields the trips as they
 * close, those of one chunk of records at a time, in reading order, the ones still open when the file ends
 * last. Bad rows and a read that failed part-way (what was read before is kept) go to `counts` and
 * `onProblem`. Aborted, it stops, counts the interruption and drops the trips still open: a truncated trip
 * would not be recognised as a duplicate when the file is ingested again.
 */
export async function* readTrips(
  path: string,
  splitter: TripSplitter,
  opts: ReadTripsOptions,
  counts: ReadCounts,
): AsyncGenerator<RawTrip[]> {
  const progressEvery = opts.progressEvery ?? 100_000;
  try {
    // The trips a chunk of records closed go out together: a yield per trip (a promise and a turn of the
    // consumer's async calls each, ~4,000 per bench file) cost ~8 % of a single-thread ingest's CPU.
    for await (const records of readTraceFile(path, opts.onBytes)) {
      const rows = new SplittingSink(splitter, opts, counts, progressEvery);
      if (records.eachRow) records.eachRow(rows);
      else
        for (const record of records) {
          if (rows.stopped) break;
          handRecord(rows, record);
        }
      if (rows.closed.length > 0) yield rows.closed;
      for (; rows.progressDue > 0; rows.progressDue--) opts.onProgress?.();
      if (rows.stopped) break;
    }
  } catch (e) {
    counts.readErrors++;
    opts.onProblem?.(`${basename(path)}: reading stopped: ${(e as Error).message}`);
  }
  if (opts.signal?.aborted) counts.interrupted = 1;
  else yield splitter.flush();
}

/** One batch of a file's rows into the splitter: the trips they closed, bad rows counted, progress due. */
class SplittingSink implements TraceRowSink {
  readonly closed: RawTrip[] = [];
  progressDue = 0;

  constructor(
    private readonly splitter: TripSplitter,
    private readonly opts: ReadTripsOptions,
    private readonly counts: ReadCounts,
    private readonly progressEvery: number,
  ) {}

  get stopped(): boolean {
    return this.opts.signal?.aborted === true;
  }

  point(
    deviceId: string,
    fix: GpsPoint,
    vehicleClass: VehicleClass | undefined,
    purpose: TripPurpose | undefined,
    incomeBand: number | undefined,
  ): void {
    this.splitter.pushFix(deviceId, fix, vehicleClass, purpose, incomeBand, this.closed);
    if (this.splitter.counts.pointsRead % this.progressEvery === 0) this.progressDue++;
  }

  problem(problem: RowProblem): void {
    this.counts.badRows++;
    this.opts.onProblem?.(formatProblem(problem));
  }
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
  const splitter = new TripSplitter({ source: opts.source, defaultVehicleClass: opts.vehicleClass });
  const sync = () => Object.assign(counts, splitter.counts, { badRows: counts.badRows });
  const { onProblem, onProgress, progressEvery, signal, onBytes } = opts;
  yield* readTrips(
    path,
    splitter,
    { onProblem, onProgress: () => onProgress?.(sync()), progressEvery, signal, onBytes },
    counts,
  );
  sync();
}
