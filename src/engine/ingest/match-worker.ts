/**
 * A map-matching worker thread (see match-pool.ts): builds the network from the segments it was
 * started with, once, and matches batches of raw trips with the standard matcher.
 */
import { workerData } from "node:worker_threads";
import { tripMatcher } from "../matching/index.js";
import { Network } from "../network/network.js";
import type { Segment } from "../network/types.js";
import type { RawTrip } from "../trips/types.js";
import type { MatchOutcome } from "./match-pool.js";

const { country, segments } = workerData as { country: string; segments: Segment[] };
const match = tripMatcher(new Network(country, segments));

export default function matchBatch(trips: RawTrip[]): MatchOutcome[] {
  return trips.map((trip) => {
    try {
      return { matched: match(trip) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  });
}
