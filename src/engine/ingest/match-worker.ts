/**
 * A map-matching worker thread (see match-pool.ts): builds the network from the segments it was
 * started with, once, adopts the route balls the pool precomputed on it, and matches batches of raw
 * trips with the standard matcher.
 */
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { workerData } from "node:worker_threads";
import { prepareMatching } from "../matching/context.js";
import { tripMatcher } from "../matching/index.js";
import { Network } from "../network/network.js";
import type { BallTable } from "../network/route-balls.js";
import type { Segment } from "../network/types.js";
import type { RawTrip } from "../trips/types.js";
import type { MatchOutcome } from "./match-pool.js";
import { OutcomePacker, rawTripAt, type PackedOutcomes, type PackedRawTrips } from "./trip-columns.js";

/** Nice steps below the main thread: its CPU share against one worker's on a shared core is ~9:1. */
const WORKER_NICENESS = 10;

const { country, segments, balls } = workerData as { country: string; segments: Segment[]; balls: BallTable };
const network = new Network(country, segments);
prepareMatching(network, balls);
const match = tripMatcher(network);
yieldToMainThread();

/** Each trip is unpacked just before it is matched and packed just after (trip-columns.ts: for the GC). */
export default function matchBatch(packed: PackedRawTrips): PackedOutcomes {
  const outcomes = new OutcomePacker();
  for (let i = 0; i < packed.trips.length; i++) outcomes.add(matchOne(rawTripAt(packed, i)));
  return outcomes.done();
}

function matchOne(trip: RawTrip): MatchOutcome {
  try {
    return { matched: match(trip) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/**
 * Lowers this thread's scheduling priority (Linux, where a thread has its own nice value), so that where
 * threads outnumber cores the thread that reads and stores, which the workers wait for, runs first; the
 * workers take whatever CPU it leaves. Elsewhere, or without permission, nothing changes.
 */
function yieldToMainThread(): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    setPriority(tid, Math.min(19, getPriority(tid) + WORKER_NICENESS));
  } catch {
    // Not Linux (no per-thread priority): the workers share the process's.
  }
}
