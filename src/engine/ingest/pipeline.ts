import { setImmediate as nextTurn } from "node:timers/promises";
import type { MatchedTrip, RawTrip, TraceSource, VehicleClass } from "../trips/types.js";
import { emptySplitCounts, TripSplitter, type SplitCounts } from "./split-trips.js";
import { GROUP_TRIPS, GROUPS_IN_FLIGHT } from "./groups.js";
import { groupOutcomes, type BatchMatcher, type MatchOutcome } from "./match-pool.js";
import type { OnBytes } from "./open-input.js";
import { readTrips } from "./split-file.js";

/** Map matching as the pipeline sees it: one raw trip in, zero or more matched trips out. */
export type TripMatcher = (trip: RawTrip) => MatchedTrip[];

/**
 * Where matched trips go (the trip store), a batch at a time with what `AheadOfStore` made of the batch's
 * trips (undefined without one); answers the trips it kept (the new ones, in order, the same objects).
 */
export type TripSink<A = undefined> = (
  trips: MatchedTrip[],
  ahead: A | undefined,
) => Promise<{ stored: readonly MatchedTrip[] }>;

/**
 * A sink's work on each matched trip that need not wait for the store (e.g. its tallies), done as the trip
 * joins its batch: with matching on worker threads, this thread does it while they still match, where at the
 * store the workers would wait for it. One `open` per batch, as a full batch may wait for the store while
 * the next one fills.
 */
export interface AheadOfStore<A> {
  open(): A;
  add(into: A, trip: MatchedTrip): void;
  /**
   * The batch's trips for the sink, when `add` keeps what they are made of: the pipeline then keeps no
   * trip objects while the batch fills (kept that long, a matched trip's path step objects outlive V8's
   * young generation, and collecting them costs more than remaking the trips).
   */
  tripsOf?(batch: A): MatchedTrip[];
}

/** What matching and storing trips counted (a distributed ingest's chunk reports these). */
export interface MatchCounts {
  /** Matched trips the matcher produced (one raw trip may give several, or none). */
  matchedTrips: number;
  /** Raw trips the matcher split into several matched trips (where the match broke off, e.g. a gap). */
  splitByMatcher: number;
  /** Raw trips the matcher could not place on the network. */
  unmatchedTrips: number;
  /** Raw trips on which the matcher threw; the first messages go to `problems`. */
  matchErrors: number;
  stored: number;
  duplicates: number;
}

export interface IngestCounts extends SplitCounts, MatchCounts {
  /** 1 when reading the file failed part-way (e.g. a corrupt .gz); what was read before is kept. */
  readErrors: number;
  /** 1 when the ingest was stopped (`signal` aborted) before the file was stored whole: not all its trips are. */
  interrupted: number;
}

export function emptyMatchCounts(): MatchCounts {
  return { matchedTrips: 0, splitByMatcher: 0, unmatchedTrips: 0, matchErrors: 0, stored: 0, duplicates: 0 };
}

/** Adds `more` into `into`, count by count. */
export function addMatchCounts(into: MatchCounts, more: MatchCounts): void {
  for (const key of Object.keys(emptyMatchCounts()) as (keyof MatchCounts)[]) into[key] += more[key];
}

/**
 * Spelled out, not spread from the two empty counts: made by spreading, each ingest's counts had a shape
 * of their own, and the optimised code that counts every trip (`keep`, `countOutcome`) was thrown away
 * ("wrong map") and compiled again in every ingest of a long-running process (`--trace-deopt`).
 */
export function emptyIngestCounts(): IngestCounts {
  const { pointsRead, badRows, droppedPoints, droppedTrips, trips } = emptySplitCounts();
  return {
    pointsRead,
    badRows,
    droppedPoints,
    droppedTrips,
    trips,
    matchedTrips: 0,
    splitByMatcher: 0,
    unmatchedTrips: 0,
    matchErrors: 0,
    stored: 0,
    duplicates: 0,
    readErrors: 0,
    interrupted: 0,
  };
}

export interface TraceIngestOptions<A = undefined> {
  source: TraceSource;
  vehicleClass: VehicleClass;
  matcher: TripMatcher;
  /**
   * When given, trips are matched through it in groups (e.g. on worker threads, see MatchPool)
   * instead of by `matcher`, several groups in flight; results are still taken in reading order,
   * so the same trips are stored in the same batches as by `matcher`.
   */
  matchBatch?: BatchMatcher;
  /**
   * Called as each batch's store begins, which blocks this thread: `matchBatch` should start every group in
   * flight now (MatchPool.handAhead), or its threads would stop at their first few meanwhile.
   */
  matchAhead?: () => void;
  sink: TripSink<A>;
  ahead?: AheadOfStore<A>;
  /** Matched trips handed to the sink at once (one store transaction). */
  batchSize?: number;
  /** Called as a file's reading begins. */
  onFileStart?: (file: number) => void;
  /** Called about every `progressEvery` points read, with the file's counts so far. */
  onProgress?: (file: number, counts: IngestCounts) => void;
  progressEvery?: number;
  /**
   * Called once per file, in reading order, when every trip of it is stored, with its final counts (a
   * batch may end after the file: the file is done when that batch is); never for a file left unfinished.
   */
  onFileStored?: (file: number, counts: IngestCounts) => Promise<void>;
  /** Row problems and match errors, formatted `file:line: message`; the caller caps how many it keeps. */
  onProblem?: (message: string) => void;
  /**
   * Stops reading when aborted (SIGTERM/SIGINT), and storing after the batch in progress. The trips still
   * open are dropped: a truncated trip would not be recognised as a duplicate when the file is ingested again.
   */
  signal?: AbortSignal;
}

/** A trace file to ingest, and what sees its own bytes as they are read (its digest is taken in the same pass). */
export interface TraceFile {
  path: string;
  onBytes?: OnBytes;
}

export interface FilesIngested {
  /** The counts of every file begun, in order (a file left unfinished counts `interrupted`). */
  files: IngestCounts[];
  /** The ingest was stopped (`signal`): files not yet stored whole were left unfinished. */
  interrupted: boolean;
}

/**
 * Matched trips per store transaction by default. Each transaction reads, adds to and rewrites the
 * packed tallies of every segment-month its trips touch, a cost that grows with what the month holds, not
 * with the batch: 40,000 trips on Monaco spent 2.4 s storing in batches of 5,000, 1.3 s in 20,000
 * (docs/trip-data.md). The stored tallies are the same for any batch size (exact speed steps).
 */
export const DEFAULT_BATCH_TRIPS = 20_000;

/** One file of an ingest: its splitter, its counts, and how many of its raw trips were matched so far. */
interface FileRun {
  readonly index: number;
  readonly splitter: TripSplitter;
  readonly counts: IngestCounts;
  /** Raw trips read (sent to matching), and those whose outcome was kept. */
  sent: number;
  kept: number;
  /** Reading ended: the file's trips are all sent. */
  read: boolean;
  /** Every trip kept: the file waits for the batch holding its last one. */
  complete: boolean;
  /** Every trip of it stored, and `onFileStored` told. */
  done: boolean;
  /** The batch its last matched trip joined. */
  lastBatch?: Batch<unknown>;
}

/** Matched trips for one store transaction, and the files whose last trip it holds. */
interface Batch<A> {
  trips: MatchedTrip[];
  size: number;
  ahead: A | undefined;
  /** Its matched trips per file (into its counts), in order: what the store kept is counted per file. */
  runs: TripsPart[];
  /** Files done once it is stored. */
  ends: FileRun[];
  stored: boolean;
}

/**
 * Reads trace files one after the other, splits each into trips (one splitter per file), matches and
 * stores them in batches. A batch runs on from one file into the next, so a day's file of a few thousand
 * trips neither rewrites the month's tallies once more nor waits alone for its own store (the workers idle
 * meanwhile); a file is done, and `onFileStored` called, when the batch holding its last trip is stored.
 * Memory holds the open trips and one batch, not the files.
 */
export async function ingestTraceFiles<A = undefined>(
  files: readonly TraceFile[],
  opts: TraceIngestOptions<A>,
): Promise<FilesIngested> {
  const store = new BatchStore(opts);
  const stopped = () => opts.signal?.aborted === true;
  const matching = new GroupedMatching(opts, store);
  const take = async (trips: RawTrip[]) => {
    if (matching.active) await matching.add(trips);
    else store.keepMatched(trips, opts.matcher);
    await store.storeFullBatches();
  };
  for (const [index, file] of files.entries()) {
    if (stopped()) break;
    const run = store.begin(index);
    opts.onFileStart?.(index);
    for await (const trips of readFileTrips(file, run, opts)) {
      run.sent += trips.length;
      await take(trips);
    }
    store.endReading(run);
    if (run.counts.interrupted) break;
  }
  // Trips already sent to matching are complete: their whole batches are stored, unless stopped meanwhile.
  await matching.finish(stopped);
  await store.storeFullBatches();
  // An interrupted run stores whole batches only: the next run matches the rest again and stores exactly the
  // batches an uninterrupted run would have.
  const interrupted = stopped() || store.files.some((r) => r.counts.interrupted > 0);
  if (!interrupted) await store.storeLast();
  await store.settle();
  return { files: store.files.map((r) => finalCounts(r, interrupted)), interrupted };
}

function readFileTrips<A>(file: TraceFile, run: FileRun, opts: TraceIngestOptions<A>) {
  return readTrips(
    file.path,
    run.splitter,
    {
      onProblem: opts.onProblem,
      onProgress: () => opts.onProgress?.(run.index, merge(run.counts, run.splitter.counts)),
      progressEvery: opts.progressEvery,
      signal: opts.signal,
      onBytes: file.onBytes,
    },
    run.counts,
  );
}

/** A file's counts as reported: an unfinished one (not stored whole when the ingest stopped) is interrupted. */
function finalCounts(run: FileRun, interrupted: boolean): IngestCounts {
  if (interrupted && !run.done) run.counts.interrupted = 1;
  return merge(run.counts, run.splitter.counts);
}

/**
 * The batches of an ingest: matched trips join the open batch in reading order, and batches are cut at
 * exactly `batchSize` trips however matching groups them, so every run hands the store the same batches
 * and the tallies add up in the same order (bit for bit).
 */
class BatchStore<A> {
  private readonly batchSize: number;
  private readonly keepsTrips: boolean;
  private batch: Batch<A>;
  private readonly fullBatches: Batch<A>[] = [];
  /** Files begun, in reading order; trips are kept in that order, so the first not complete is the kept trip's. */
  readonly files: FileRun[] = [];
  private current = 0;
  /** Files stored whole, not yet told. */
  private readonly finished: FileRun[] = [];
  /** Complete files waiting for a batch to be stored. */
  private waiting = 0;

  constructor(private readonly opts: TraceIngestOptions<A>) {
    this.batchSize = opts.batchSize ?? DEFAULT_BATCH_TRIPS;
    this.keepsTrips = opts.ahead?.tripsOf !== undefined;
    this.batch = this.openBatch();
  }

  begin(index: number): FileRun {
    const { source, vehicleClass } = this.opts;
    const run: FileRun = {
      index,
      splitter: new TripSplitter({ source, defaultVehicleClass: vehicleClass }),
      counts: emptyIngestCounts(),
      sent: 0,
      kept: 0,
      read: false,
      complete: false,
      done: false,
    };
    this.files.push(run);
    return run;
  }

  /** The file's reading ended: it may be complete now (every trip kept, or none read). */
  endReading(run: FileRun): void {
    run.read = true;
    this.completeIfKept(run);
  }

  /**
   * Matches `trips` on this thread and keeps them. A loop in a method, not in the ingest's own closure:
   * closures made per ingest had their loops compiled afresh in every ingest.
   */
  keepMatched(trips: readonly RawTrip[], matcher: TripMatcher): void {
    for (let i = 0; i < trips.length; i++) this.keep(trips[i], matchOne(trips[i], matcher));
  }

  keep(trip: RawTrip, outcome: MatchOutcome): void {
    while (this.files[this.current].complete) this.current++;
    const run = this.files[this.current];
    run.kept++;
    for (const matched of countOutcome(trip, outcome, run.counts, this.opts.onProblem)) {
      const batch = this.batch;
      this.opts.ahead?.add(batch.ahead!, matched);
      if (!this.keepsTrips) batch.trips.push(matched);
      const last = batch.runs.at(-1);
      if (last?.counts === run.counts) last.trips++;
      else batch.runs.push({ counts: run.counts, trips: 1 });
      run.lastBatch = batch as Batch<unknown>;
      if (++batch.size === this.batchSize) {
        this.fullBatches.push(batch);
        this.batch = this.openBatch();
      }
    }
    this.completeIfKept(run);
  }

  /**
   * Stores the full batches. Stopped, it ends with the batch in progress: with many trips in flight, reading
   * may be long done. A turn of the event loop before each batch lets a stop signal in.
   */
  async storeFullBatches(): Promise<void> {
    await this.settle();
    while (this.fullBatches.length > 0) {
      await nextTurn();
      if (this.opts.signal?.aborted) return;
      await this.store(this.fullBatches.shift()!);
    }
  }

  /** The open batch, at the end: its trips, and the files that wait for it. */
  async storeLast(): Promise<void> {
    await this.store(this.batch);
  }

  /**
   * Files whose trips are all stored, in reading order, told so (`onFileStored`). A file whose last trip is
   * in a batch not yet stored waits for it; one without matched trips is done at once, unless a file before
   * it waits, and then it waits with the batch open as it completes: files are done in reading order.
   */
  async settle(): Promise<void> {
    while (this.finished.length > 0) {
      const run = this.finished.shift()!;
      run.done = true;
      await this.opts.onFileStored?.(run.index, merge(run.counts, run.splitter.counts));
    }
  }

  /**
   * Completes `run` and the files read after it, in order, as far as every trip of each is kept: a file
   * completes after the ones before it (an empty file may end its reading while earlier trips still match).
   */
  private completeIfKept(run: FileRun): void {
    if (run.complete) return;
    for (let i = run.index; i < this.files.length; i++) {
      const file = this.files[i];
      if (file.complete) continue;
      const earlier = this.files[i - 1];
      // A file a stop cut short is never complete: its open trips were dropped.
      const whole = file.read && !file.counts.interrupted;
      if (!whole || file.kept < file.sent || (earlier && !earlier.complete)) return;
      file.complete = true;
      this.awaitStore(file);
    }
  }

  /** A complete file waits for the batch holding its last trip, or for the files before it; else it is done. */
  private awaitStore(file: FileRun): void {
    const last = file.lastBatch;
    const wait = last ? !last.stored : this.waiting > 0;
    if (!wait) this.finished.push(file);
    else {
      (last ?? this.batch).ends.push(file);
      this.waiting++;
    }
  }

  private async store(batch: Batch<A>): Promise<void> {
    if (batch.size > 0) await this.storeTrips(batch);
    batch.stored = true;
    this.waiting -= batch.ends.length;
    this.finished.push(...batch.ends);
    await this.settle();
  }

  /** The batch's trips through the sink, what it kept counted per file (its stored trips are in order). */
  private async storeTrips(batch: Batch<A>): Promise<void> {
    this.opts.matchAhead?.();
    const trips = this.keepsTrips ? this.opts.ahead!.tripsOf!(batch.ahead!) : batch.trips;
    const { stored } = await this.opts.sink(trips, batch.ahead);
    countStoredByPart(trips, stored, batch.runs);
  }

  private openBatch(): Batch<A> {
    return { trips: [], size: 0, ahead: this.opts.ahead?.open(), runs: [], ends: [], stored: false };
  }
}

/** Consecutive trips of one part (one file) of a batch or chunk, and the counts they go into. */
export interface TripsPart {
  counts: MatchCounts;
  trips: number;
}

/**
 * What a store kept of `trips` counted per part: `trips` cut into `parts` in order, `stored` the new ones of
 * them, in order, the same objects (what an append answers); each part's counts gain its stored trips and
 * its duplicates.
 */
export function countStoredByPart(
  trips: readonly MatchedTrip[],
  stored: readonly MatchedTrip[],
  parts: readonly TripsPart[],
): void {
  let next = 0;
  let at = 0;
  for (const { counts, trips: size } of parts) {
    const first = next;
    for (const end = at + size; at < end; at++) if (stored[next] === trips[at]) next++;
    counts.stored += next - first;
    counts.duplicates += size - (next - first);
  }
}

function matchOne(trip: RawTrip, matcher: TripMatcher): MatchOutcome {
  try {
    return { matched: matcher(trip) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/**
 * Counts one raw trip's match outcome into `counts` and answers its matched trips (none when matching
 * failed: that goes to `onProblem`). The chunks of a distributed ingest count with it too.
 */
export function countOutcome(
  trip: RawTrip,
  outcome: MatchOutcome,
  counts: MatchCounts,
  onProblem?: (message: string) => void,
): MatchedTrip[] {
  if (outcome.error !== undefined) {
    counts.matchErrors++;
    const when = new Date(trip.points[0].t).toISOString();
    onProblem?.(`matching the trip of ${trip.deviceId} at ${when} failed: ${outcome.error}`);
    return [];
  }
  const { matched } = outcome;
  if (matched.length === 0) counts.unmatchedTrips++;
  if (matched.length > 1) counts.splitByMatcher++;
  counts.matchedTrips += matched.length;
  return matched;
}

/**
 * Sends trips to `matchBatch` in groups, a few groups in flight, and hands the outcomes to the batches
 * strictly in the order the trips were read (so storage is deterministic). Given the batches themselves,
 * not a closure around them made per ingest: such closures, called per trip, were compiled afresh in
 * every ingest of a process (docs/performance.md, stop 43).
 */
class GroupedMatching<A> {
  private group: RawTrip[] = [];
  private readonly inFlight: { trips: RawTrip[]; outcomes: Promise<MatchOutcome[]> }[] = [];

  constructor(
    private readonly opts: TraceIngestOptions<A>,
    private readonly batches: Pick<BatchStore<A>, "keep">,
  ) {}

  get active(): boolean {
    return this.opts.matchBatch !== undefined;
  }

  async add(trips: RawTrip[]): Promise<void> {
    for (const trip of trips) this.group.push(trip);
    if (this.group.length < GROUP_TRIPS) return;
    this.send();
    while (this.inFlight.length > GROUPS_IN_FLIGHT) await this.takeOldest();
  }

  /** Takes every group's outcomes, unless `stopped` says to leave the rest. */
  async finish(stopped: () => boolean): Promise<void> {
    if (this.group.length > 0) this.send();
    while (this.inFlight.length > 0 && !stopped()) await this.takeOldest();
  }

  private send(): void {
    const trips = this.group;
    this.group = [];
    const outcomes = this.opts.matchBatch!(trips);
    // Awaited in order later; a rejection must not go unhandled meanwhile.
    outcomes.catch(() => {});
    this.inFlight.push({ trips, outcomes });
  }

  private async takeOldest(): Promise<void> {
    const { trips, outcomes } = this.inFlight.shift()!;
    const results = await groupOutcomes(trips, outcomes);
    for (let i = 0; i < trips.length; i++) this.batches.keep(trips[i], results[i]);
  }
}

/** The splitter's own counts over the pipeline's (bad rows are counted here, not by the splitter). */
function merge(counts: IngestCounts, split: SplitCounts): IngestCounts {
  return { ...counts, ...split, badRows: counts.badRows };
}

/** Adds `b` into `a`, field by field (nested drop counts too). */
export function addCounts(a: IngestCounts, b: IngestCounts): void {
  for (const key of Object.keys(a) as (keyof IngestCounts)[]) {
    const value = a[key];
    if (typeof value === "number") (a[key] as number) = value + (b[key] as number);
    else
      for (const k of Object.keys(value))
        (value as Record<string, number>)[k] += (b[key] as Record<string, number>)[k];
  }
}
