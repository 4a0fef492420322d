/**
 * A map-matching worker thread (see match-pool.ts): builds the network from the segments it was
 * started with, once, adopts the route balls the pool precomputed on it, and matches batches of raw
 * trips with the standard matcher.
 */
import { workerData } from "node:worker_threads";
import { prepareMatching } from "../matching/context.js";
import { tripMatcher } from "../matching/index.js";
import { Network } from "../network/network.js";
import type { BallTable } from "../network/route-balls.js";
import type { Segment } from "../network/types.js";
import type { MatchOutcome } from "./match-pool.js";
import { packOutcomes, unpackRawTrips, type PackedOutcomes, type PackedRawTrips } from "./trip-columns.js";

const { country, segments, balls } = workerData as { country: string; segments: Segment[]; balls: BallTable };
const network = new Network(country, segments);
prepareMatching(network, balls);
const match = tripMatcher(network);

export default function matchBatch(packed: PackedRawTrips): PackedOutcomes {
  const outcomes = unpackRawTrips(packed).map((trip): MatchOutcome => {
    try {
      return { matched: match(trip) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  });
  return packOutcomes(outcomes);
}
