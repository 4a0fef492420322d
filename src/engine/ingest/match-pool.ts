import { OrderedPool } from "../ordered-pool.js";
import { prepareMatching } from "../matching/context.js";
import { GROUPS_IN_FLIGHT } from "./groups.js";
import type { Network } from "../network/network.js";
import type { MatchedTrip, RawTrip } from "../trips/types.js";
import { packRawTrips, unpackOutcomes, type PackedOutcomes } from "./trip-columns.js";

/** What matching one raw trip gave: its matched trips, or the message of the error it threw. */
export type MatchOutcome = { matched: MatchedTrip[]; error?: undefined } | { error: string };

/** Matches a batch of raw trips, outcomes in the same order. */
export type BatchMatcher = (trips: RawTrip[]) => Promise<MatchOutcome[]>;

/**
 * A group's outcomes; when the matcher failed as a whole (a worker died, not one trip's matching),
 * every trip of the group reports its error.
 */
export async function groupOutcomes(
  trips: readonly RawTrip[],
  outcomes: Promise<MatchOutcome[]>,
): Promise<MatchOutcome[]> {
  try {
    return await outcomes;
  } catch (e) {
    return trips.map(() => ({ error: (e as Error).message }));
  }
}

/**
 * Built, the worker is match-worker.js. From TypeScript sources (tsx: tests, benches) the worker starts at
 * tsx-worker.mjs, which loads match-worker.ts as an ES module as the built one is: given the .ts file itself,
 * piscina `require`s it and tsx compiles the whole matcher to CommonJS, whose every call through an import is a
 * property load, and the worker matched 15-25 % slower than the main thread (docs/performance.md, issue 16).
 */
const FROM_SOURCES = import.meta.url.endsWith(".ts");
const WORKER = new URL(FROM_SOURCES ? "./match-worker.ts" : "./match-worker.js", import.meta.url);
const ENTRY = FROM_SOURCES ? new URL("../tsx-worker.mjs", import.meta.url) : WORKER;

/**
 * Groups handed to each worker at once: with one, a worker waited ~0.8 ms per group (its answer taken, the
 * next group handed over), ~8 % of its time at 30 s sampling; with two it starts the next at once. A month
 * of daily files ingested 1.8 % faster (median of ten rounds, none slower; docs/performance.md, "Stop 46").
 */
const GROUPS_AHEAD_PER_WORKER = 2;

/**
 * The most groups a worker holds once `handAhead` gave it those waiting: all the ingest pipeline ever has in
 * flight (its groups in flight and the one it just sent), so none is left behind while this thread stores a
 * batch.
 */
const MOST_GROUPS_HANDED_AHEAD_PER_WORKER = GROUPS_IN_FLIGHT + 1;

/**
 * Map matching on worker threads: each worker holds its own copy of the network and its own
 * matching caches, so batches run in parallel; the only thing shared is the network's precomputed
 * route balls (`prepareMatching`, built here once, read-only shared memory), which every worker
 * would otherwise fill for itself. The pool answers batches in any order; callers keep their own
 * order (the ingest pipeline stores in reading order).
 */
export class MatchPool {
  private readonly pool: OrderedPool;

  constructor(
    readonly network: Network,
    threads: number,
    tasksPerThread = GROUPS_AHEAD_PER_WORKER,
  ) {
    this.pool = new OrderedPool({
      tasksPerThread,
      tasksAheadPerThread: MOST_GROUPS_HANDED_AHEAD_PER_WORKER,
      filename: ENTRY.href,
      minThreads: threads,
      maxThreads: threads,
      // Idle workers keep their warm caches for the next batch.
      idleTimeout: 60_000,
      workerData: {
        tsxTarget: WORKER.href,
        country: network.country,
        segments: network.segments,
        balls: prepareMatching(network),
      },
    });
  }

  /** Trips cross as typed-array columns (trip-columns.ts): cloning an object per point and step cost more. */
  readonly match: BatchMatcher = async (trips) =>
    unpackOutcomes(await this.pool.run<PackedOutcomes>(packRawTrips(trips)));

  /**
   * Hands the workers every group waiting, for when this thread is about to block: storing a batch of
   * 20,000 trips takes 0.4-1.1 s on Monaco, and the workers stopped after their two groups each, one core
   * idle meanwhile. 80,000 trips in one file (four batches) ingested ~7 % faster (docs/performance.md).
   */
  readonly handAhead = (): void => this.pool.handAhead();

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
