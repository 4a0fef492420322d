import { deserialize, serialize } from "node:v8";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { SegmentCellAccumulator } from "../engine/counts/segment-cells.js";
import {
  groupOutcomes,
  MatchPool,
  type BatchMatcher,
  type MatchOutcome,
} from "../engine/ingest/match-pool.js";
import {
  addMatchCounts,
  countOutcome,
  countStoredByPart,
  emptyMatchCounts,
  type MatchCounts,
  type TripsPart,
} from "../engine/ingest/pipeline.js";
import { GROUP_TRIPS } from "../engine/ingest/groups.js";
import { packRawTrips, unpackRawTrips, type PackedRawTrips } from "../engine/ingest/trip-columns.js";
import { LocalClock } from "../engine/time.js";
import type { MatchedTrip, RawTrip } from "../engine/trips/types.js";
import type { AppContext } from "./context.js";
import { requireNetwork, storeTrips } from "./ingest.js";
import { networkTimeZone } from "./networks.js";

/**
 * One chunk of a distributed ingest (issue 15): raw trips, already split by the caller, that any worker
 * process map-matches and stores. The chunk's trips, their segment and day tallies and its done marker
 * commit in one transaction, so a chunk run again (its worker died, its lease ran out) stores nothing
 * twice and loses nothing.
 */
export const INGEST_CHUNK_JOB = "ingest-chunk";

export interface IngestChunkPayload {
  ingestId: string;
  /** 0-based place of the chunk in the ingest's reading order. */
  seq: number;
  country: string;
  /**
   * Raw trips per file, in order, when the chunk holds the trips of more than one file (a chunk runs on
   * from one file into the next); absent when they all come from one.
   */
  parts?: number[];
}

/** What storing one chunk gave: the matcher's and the store's counts of the ingest report. */
export type IngestChunkResult = MatchCounts & {
  /** The first match-error messages (the rest are only counted). */
  problems: string[];
  moreProblems: number;
  /** With the payload's `parts`: the same counts per part (per file), in order. */
  parts?: MatchCounts[];
};

const MAX_CHUNK_PROBLEMS = 20;

/** Chunk input as stored: the packed trip columns (v8), deflated (fast level: NaN and time columns shrink most). */
export function encodeChunk(trips: RawTrip[]): Uint8Array {
  return deflateRawSync(serialize(packRawTrips(trips)), { level: 1 });
}

export function decodeChunk(input: Uint8Array): RawTrip[] {
  return unpackRawTrips(deserialize(inflateRawSync(input)) as PackedRawTrips);
}

/** How a run of a chunk ended: stored now, found done already (or dropped), or given up before storing. */
export type ChunkOutcome =
  { type: "stored"; result: IngestChunkResult } | { type: "done already" } | { type: "abandoned" };

/**
 * Matches a chunk's trips with `match` and stores them with the chunk's done marker. `keepGoing` is
 * asked between groups of trips and before storing: false (the worker is stopping, or lost its lease)
 * gives the chunk up with nothing written.
 */
export async function storeIngestChunk(
  ctx: AppContext,
  chunk: IngestChunkPayload,
  match: BatchMatcher,
  keepGoing: () => boolean = () => true,
): Promise<ChunkOutcome> {
  const { ingestChunks } = ctx.store;
  const input = await ingestChunks.input(chunk.ingestId, chunk.seq);
  if (!input) return { type: "done already" };
  const trips = decodeChunk(input);
  const outcomes = await matchAll(trips, match, keepGoing);
  if (!outcomes || !keepGoing()) return { type: "abandoned" };
  const { matched, result, parts } = tallyOutcomes(trips, outcomes, partsOf(chunk, trips.length));
  const cells = new SegmentCellAccumulator(
    await requireNetwork(ctx, chunk.country),
    LocalClock.of(await networkTimeZone(ctx.store, chunk.country)),
  );
  return await ctx.store.transaction(async (): Promise<ChunkOutcome> => {
    if (!(await ingestChunks.lockUndone(chunk.ingestId, chunk.seq))) return { type: "done already" };
    if (matched.length > 0) {
      const { inserted, duplicates, stored } = await storeTrips(ctx, chunk.country, matched, cells);
      result.stored = inserted;
      result.duplicates = duplicates;
      countStoredByPart(matched, stored, parts);
    }
    if (chunk.parts) result.parts = parts.map((p) => p.counts);
    await ingestChunks.markDone(chunk.ingestId, chunk.seq, { ...result });
    return { type: "stored", result };
  });
}

/** The chunk's raw trips per file: its payload's parts, which must add up to its trips; else one part. */
function partsOf(chunk: IngestChunkPayload, trips: number): number[] {
  if (!chunk.parts) return [trips];
  const sum = chunk.parts.reduce((a, b) => a + b, 0);
  if (sum !== trips || chunk.parts.some((n) => !Number.isInteger(n) || n < 0))
    throw new Error(
      `chunk ${chunk.seq + 1}: its parts (${chunk.parts.join(", ")}) are not its ${trips} trips`,
    );
  return chunk.parts;
}

/** Groups of GROUP_TRIPS raw trips (as the pipeline sends) in flight at once: enough to keep a pool busy. */
const GROUPS_IN_FLIGHT = 8;

/**
 * Outcomes in trip order; null when `keepGoing` said stop before a group was sent (the groups in flight then
 * finish unread). A group is sent as the oldest comes back, so the threads never wait for a whole wave: in
 * waves of 8 groups, each wave's last group left the other threads idle, and a chunk matched 1.18 times
 * slower (median of 12 rounds, docs/performance.md, "Stop 47").
 */
async function matchAll(
  trips: RawTrip[],
  match: BatchMatcher,
  keepGoing: () => boolean,
): Promise<MatchOutcome[] | null> {
  const outcomes: MatchOutcome[] = [];
  const inFlight: Promise<MatchOutcome[]>[] = [];
  let sent = 0;
  while (sent < trips.length || inFlight.length > 0) {
    while (sent < trips.length && inFlight.length < GROUPS_IN_FLIGHT) {
      if (!keepGoing()) return null;
      const group = trips.slice(sent, sent + GROUP_TRIPS);
      sent += group.length;
      inFlight.push(groupOutcomes(group, match(group)));
    }
    for (const outcome of await inFlight.shift()!) outcomes.push(outcome);
  }
  return outcomes;
}

/**
 * The matched trips in reading order and the matcher's counts, as the ingest pipeline counts them: for the
 * whole chunk and per part (`partTrips`: raw trips per part, in order).
 */
function tallyOutcomes(
  trips: RawTrip[],
  outcomes: MatchOutcome[],
  partTrips: number[],
): { matched: MatchedTrip[]; result: IngestChunkResult; parts: TripsPart[] } {
  const result: IngestChunkResult = { ...emptyMatchCounts(), problems: [], moreProblems: 0 };
  const addProblem = (message: string) => {
    if (result.problems.length < MAX_CHUNK_PROBLEMS) result.problems.push(message);
    else result.moreProblems++;
  };
  const matched: MatchedTrip[] = [];
  // Each part's counts, and how many of the chunk's matched trips are its.
  const parts: TripsPart[] = [];
  let i = 0;
  for (const count of partTrips) {
    const part: TripsPart = { counts: emptyMatchCounts(), trips: 0 };
    for (const end = i + count; i < end; i++) {
      const ofTrip = countOutcome(trips[i], outcomes[i], part.counts, addProblem);
      for (const trip of ofTrip) matched.push(trip);
      part.trips += ofTrip.length;
    }
    addMatchCounts(result, part.counts);
    parts.push(part);
  }
  return { matched, result, parts };
}

/**
 * A worker process's matching threads per country (MatchPool: a copy of the network each), kept warm
 * across chunks and rebuilt when the country's network was imported again.
 */
export class ChunkMatchers {
  /** Promises, so runners starting chunks of one country at once share one pool. */
  private readonly pools = new Map<string, { importedAt: string; pool: Promise<MatchPool> }>();

  constructor(
    private readonly ctx: AppContext,
    private readonly threads: number,
  ) {}

  async for(country: string): Promise<BatchMatcher> {
    const code = country.toLowerCase();
    const importedAt =
      (await this.ctx.store.network.countries()).find((c) => c.country === code)?.importedAt ?? "";
    let current = this.pools.get(code);
    if (current && current.importedAt !== importedAt) {
      this.pools.delete(code);
      this.ctx.networks.invalidate(code);
      void current.pool.then((pool) => pool.close()).catch(() => {});
      current = undefined;
    }
    if (!current) {
      current = {
        importedAt,
        pool: requireNetwork(this.ctx, code).then((network) => new MatchPool(network, this.threads)),
      };
      this.pools.set(code, current);
      // A failed start is not kept: the next chunk tries again.
      current.pool.catch(() => this.pools.get(code) === current && this.pools.delete(code));
    }
    return (await current.pool).match;
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map(({ pool }) => pool.then((p) => p.close()).catch(() => {})));
  }
}
