import { setImmediate as nextTurn } from "node:timers/promises";
import type { MatchedTrip, RawTrip, TraceSource, VehicleClass } from "../trips/types.js";
import { emptySplitCounts, TripSplitter, type SplitCounts } from "./split-trips.js";
import { groupOutcomes, type BatchMatcher, type MatchOutcome } from "./match-pool.js";
import type { OnBytes } from "./open-input.js";
import { readTrips } from "./split-file.js";

/** Map matching as the pipeline sees it: one raw trip in, zero or more matched trips out. */
export type TripMatcher = (trip: RawTrip) => MatchedTrip[];

/**
 * Where matched trips go (the trip store), a batch at a time with what `AheadOfStore` made of the batch's
 * trips (undefined without one); answers what it kept.
 */
export type TripSink<A = undefined> = (
  trips: MatchedTrip[],
  ahead: A | undefined,
) => Promise<{ inserted: number; duplicates: number }>;

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
  /** 1 when the ingest was stopped part-way (`signal` aborted): the trips still open were not stored. */
  interrupted: number;
}

export function emptyMatchCounts(): MatchCounts {
  return { matchedTrips: 0, splitByMatcher: 0, unmatchedTrips: 0, matchErrors: 0, stored: 0, duplicates: 0 };
}

export function emptyIngestCounts(): IngestCounts {
  return { ...emptySplitCounts(), ...emptyMatchCounts(), readErrors: 0, interrupted: 0 };
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
  /** Groups in flight at once with `matchBatch` (default GROUPS_IN_FLIGHT). */
  groupsInFlight?: number;
  sink: TripSink<A>;
  ahead?: AheadOfStore<A>;
  /** Matched trips handed to the sink at once (one store transaction). */
  batchSize?: number;
  /** Called about every `progressEvery` points read. */
  onProgress?: (counts: IngestCounts) => void;
  progressEvery?: number;
  /** Row problems and match errors, formatted `file:line: message`; the caller caps how many it keeps. */
  onProblem?: (message: string) => void;
  /**
   * Stops reading when aborted (SIGTERM/SIGINT), and storing after the batch in progress. The trips still
   * open are dropped: a truncated trip would not be recognised as a duplicate when the file is ingested again.
   */
  signal?: AbortSignal;
  /** Sees the file's own bytes as they are read (its digest is taken in the same pass). */
  onBytes?: OnBytes;
}

/**
 * Matched trips per store transaction by default. Each transaction reads, adds to and rewrites the
 * packed tallies of every segment-month its trips touch, a cost that grows with what the month holds, not
 * with the batch: 40,000 trips on Monaco spent 2.4 s storing in batches of 5,000, 1.3 s in 20,000
 * (docs/trip-data.md). The stored tallies are the same for any batch size (exact speed steps).
 */
export const DEFAULT_BATCH_TRIPS = 20_000;

/**
 * Reads one trace file, splits it into trips, matches and stores them in
 * batches. Memory holds the open trips and one batch, not the file.
 */
export async function ingestTraceFile<A = undefined>(
  path: string,
  opts: TraceIngestOptions<A>,
): Promise<IngestCounts> {
  const { batchSize = DEFAULT_BATCH_TRIPS, progressEvery = 100_000 } = opts;
  const splitter = new TripSplitter({ source: opts.source, defaultVehicleClass: opts.vehicleClass });
  const counts = emptyIngestCounts();
  const openBatch = () => ({ trips: [] as MatchedTrip[], size: 0, ahead: opts.ahead?.open() });
  const keepsTrips = opts.ahead?.tripsOf !== undefined;
  let batch = openBatch();
  const fullBatches: (typeof batch)[] = [];

  const storeBatch = async ({ trips, ahead }: typeof batch) => {
    const { inserted, duplicates } = await opts.sink(
      keepsTrips ? opts.ahead!.tripsOf!(ahead!) : trips,
      ahead,
    );
    counts.stored += inserted;
    counts.duplicates += duplicates;
  };
  const stopped = () => opts.signal?.aborted === true;
  // Stopped, it ends with the batch in progress: with many trips in flight, reading may be long done. A
  // turn of the event loop before each batch lets a stop signal in (the store may finish without one).
  const storeFullBatches = async () => {
    while (fullBatches.length > 0) {
      await nextTurn();
      if (stopped()) return;
      await storeBatch(fullBatches.shift()!);
    }
  };
  // Batches are cut at exactly `batchSize` trips in reading order, however matching groups them, so every
  // run hands the store the same batches and the tallies add up in the same order (bit for bit).
  const keep = (trip: RawTrip, outcome: MatchOutcome) => {
    for (const matched of countOutcome(trip, outcome, counts, opts.onProblem)) {
      opts.ahead?.add(batch.ahead!, matched);
      if (!keepsTrips) batch.trips.push(matched);
      if (++batch.size === batchSize) {
        fullBatches.push(batch);
        batch = openBatch();
      }
    }
  };
  const matching = new GroupedMatching(opts, keep);
  const take = async (trips: RawTrip[]) => {
    if (matching.active) await matching.add(trips);
    else for (const trip of trips) keep(trip, matchOne(trip, opts.matcher));
    await storeFullBatches();
  };

  const reading = readTrips(
    path,
    splitter,
    {
      onProblem: opts.onProblem,
      onProgress: () => opts.onProgress?.(merge(counts, splitter.counts)),
      progressEvery,
      signal: opts.signal,
      onBytes: opts.onBytes,
    },
    counts,
  );
  for await (const trips of reading) await take(trips);
  // Trips already sent to matching are complete: their whole batches are stored, unless stopped meanwhile.
  await matching.finish(stopped);
  await storeFullBatches();
  if (stopped()) counts.interrupted = 1;
  // An interrupted run stores whole batches only: the next run matches the rest again and stores exactly the
  // batches an uninterrupted run would have.
  if (!counts.interrupted && batch.size > 0) await storeBatch(batch);
  return merge(counts, splitter.counts);
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

/** Raw trips per group sent to `matchBatch`: large enough that messaging costs little against matching. */
export const GROUP_TRIPS = 64;

/**
 * Groups in flight by default: enough to keep two workers matching while this thread stores a batch
 * (~0.3 s of CPU for 5,000 trips on Monaco, ~14 ms per group matched). The 4 there were before covered
 * a tenth of it, then the workers waited; 128 did no better than 48 with batches of 20,000.
 */
const GROUPS_IN_FLIGHT = 48;

/**
 * Sends trips to `matchBatch` in groups, a few groups in flight, and hands the outcomes to `keep`
 * strictly in the order the trips were read (so storage is deterministic).
 */
class GroupedMatching<A> {
  private group: RawTrip[] = [];
  private readonly inFlight: { trips: RawTrip[]; outcomes: Promise<MatchOutcome[]> }[] = [];

  constructor(
    private readonly opts: TraceIngestOptions<A>,
    private readonly keep: (trip: RawTrip, outcome: MatchOutcome) => void,
  ) {}

  get active(): boolean {
    return this.opts.matchBatch !== undefined;
  }

  async add(trips: RawTrip[]): Promise<void> {
    for (const trip of trips) this.group.push(trip);
    if (this.group.length < GROUP_TRIPS) return;
    this.send();
    while (this.inFlight.length > (this.opts.groupsInFlight ?? GROUPS_IN_FLIGHT)) await this.takeOldest();
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
    trips.forEach((trip, i) => this.keep(trip, results[i]));
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
