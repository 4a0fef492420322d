import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import { addMatchCounts, emptyIngestCounts, type IngestCounts } from "../engine/ingest/pipeline.js";
import { splitTraceFile, type SplitFileCounts } from "../engine/ingest/split-file.js";
import { emptySplitCounts } from "../engine/ingest/split-trips.js";
import type { RawTrip, TraceSource } from "../engine/trips/types.js";
import { fail } from "../domain/errors.js";
import type { AppContext } from "./context.js";
import type { IngestChunkState } from "./ports/store.js";
import {
  encodeChunk,
  INGEST_CHUNK_JOB,
  type IngestChunkPayload,
  type IngestChunkResult,
} from "./ingest-chunk.js";
import {
  addFileReport,
  compactStored,
  FileDigest,
  emptyIngestReport,
  progressLine,
  recordIngestRun,
  startIngest,
  type IngestFilesOptions,
  type IngestReport,
  type ProblemList,
} from "./ingest.js";

export interface ChunkedIngestOptions extends Omit<
  IngestFilesOptions,
  "matcher" | "threads" | "matchPool" | "batchSize"
> {
  /** Raw trips per chunk (one job), across files; the last chunk takes the rest. */
  chunkTrips: number;
  /** How often the caller looks at its chunks while waiting (default 500 ms). */
  pollMs?: number;
}

export interface ChunkedIngestReport extends IngestReport {
  /** Chunks queued for the workers. */
  chunks: number;
  /** `chunk N: reason` of the chunks that failed for good (their trips are not stored). */
  failedChunks: string[];
}

/** Raw trips per chunk when STREETFLOW_INGEST_CHUNK_TRIPS is not set. */
export const DEFAULT_CHUNK_TRIPS = 5000;

interface FileRun {
  path: string;
  startedAt: string;
  /** Taken while the file is read into chunks. */
  digest: FileDigest;
  counts: SplitFileCounts;
}

/** A file's raw trips in one chunk: the file by its place in the ingest, and how many. */
interface ChunkPart {
  file: number;
  trips: number;
}

/**
 * Ingest for several processes (issue 15): this process reads each file and splits it into trips (one
 * TripSplitter per file, so trips are cut exactly as by ingestFiles), packs them into chunks of
 * `chunkTrips` trips in the shared store and queues one job per chunk; any worker process matches and
 * stores a chunk (storeIngestChunk). A chunk runs on from one file into the next, as ingestFiles' batches
 * do, so a month of small daily files is not a small chunk (a rewrite of the month's tallies) per file. It
 * waits for every chunk, then records the files as ingest runs and compacts, as ingestFiles does, and
 * reports the same counts.
 */
export async function ingestFilesInChunks(
  ctx: AppContext,
  files: string[],
  opts: ChunkedIngestOptions,
): Promise<ChunkedIngestReport> {
  const { country, paths, log, problems } = startIngest(files, opts);
  // Only its presence: this process matches nothing, so it need not build the network.
  if (!(await ctx.store.network.countries()).some((c) => c.country === country))
    throw fail("unknown_country", { country });
  const ingestId = randomUUID();
  const runs: FileRun[] = [];
  const tracker = new ChunkTracker(ctx, ingestId, opts.pollMs ?? 500, log);
  const queue = new ChunkQueue(opts.chunkTrips, async (seq, trips, parts) => {
    await tracker.waitUntil(MAX_OUTSTANDING_CHUNKS - 1);
    await ctx.store.ingestChunks.add(ingestId, seq, encodeChunk(trips));
    const payload: IngestChunkPayload = { ingestId, seq, country, ...(parts.length > 1 && { parts }) };
    await ctx.store.jobs.enqueue(INGEST_CHUNK_JOB, payload);
    tracker.queued = seq + 1;
  });
  try {
    for (const path of paths) {
      const run: FileRun = {
        path,
        startedAt: new Date().toISOString(),
        digest: new FileDigest(),
        counts: emptyFileCounts(),
      };
      runs.push(run);
      log(`${path}: reading (chunks of ${opts.chunkTrips.toLocaleString("en-US")} trips for the workers)`);
      await readIntoChunks(run, runs.length - 1, opts, problems, queue);
      log(`${path}: read, ${queue.seq} chunks queued so far`);
      if (run.counts.interrupted) break;
    }
    // Stopped part-way: the trips still open were dropped, and the last partial chunk goes too, as a
    // partial batch does in ingestFiles; the files with trips in it are not whole.
    const interrupted = runs.some((r) => r.counts.interrupted);
    if (!interrupted) await queue.flush();
    const chunks = await tracker.waitUntil(0);
    const report = reportOf(runs, chunks, queue.partsOf, problems);
    report.interrupted = interrupted ? String(opts.signal?.reason ?? "interrupted") : undefined;
    // A file with trips in a chunk not stored is not whole.
    const unstored = new Set(
      queue.partsOf.flatMap((parts, seq) => (chunks[seq].state === "done" ? [] : parts.map((p) => p.file))),
    );
    const whole = (file: number) =>
      !runs[file].counts.interrupted && !queue.waiting(file) && !unstored.has(file);
    await recordRuns(ctx, country, opts.source, log, report, runs, whole);
    return report;
  } finally {
    await ctx.store.ingestChunks.drop(ingestId);
  }
}

async function readIntoChunks(
  { path, counts, digest }: FileRun,
  file: number,
  opts: ChunkedIngestOptions,
  problems: ProblemList,
  queue: ChunkQueue,
): Promise<void> {
  const split = splitTraceFile(
    path,
    {
      source: opts.source,
      vehicleClass: opts.vehicleClass,
      onProblem: (m) => problems.add(m),
      onProgress: (c) => opts.onProgress?.(`${path}: ${c.pointsRead.toLocaleString("en-US")} points read`),
      signal: opts.signal,
      onBytes: digest.add,
    },
    counts,
  );
  for await (const trips of split) await queue.add(file, trips);
}

/** Raw trips cut into chunks of `chunkTrips` in reading order, across files; each chunk's parts kept by its seq. */
class ChunkQueue {
  private pending: RawTrip[] = [];
  private pendingParts: ChunkPart[] = [];
  /** Per chunk (by seq): its trips' files, in order. */
  readonly partsOf: ChunkPart[][] = [];

  constructor(
    private readonly chunkTrips: number,
    private readonly queue: (seq: number, trips: RawTrip[], parts: number[]) => Promise<void>,
  ) {}

  get seq(): number {
    return this.partsOf.length;
  }

  async add(file: number, trips: RawTrip[]): Promise<void> {
    if (trips.length === 0) return;
    for (const trip of trips) this.pending.push(trip);
    const last = this.pendingParts.at(-1);
    if (last?.file === file) last.trips += trips.length;
    else this.pendingParts.push({ file, trips: trips.length });
    while (this.pending.length >= this.chunkTrips) await this.queueNext(this.chunkTrips);
  }

  /** The last chunk, of the trips left. */
  async flush(): Promise<void> {
    if (this.pending.length > 0) await this.queueNext(this.pending.length);
  }

  /** The file has trips not yet in a chunk. */
  waiting(file: number): boolean {
    return this.pendingParts.some((p) => p.file === file);
  }

  private async queueNext(n: number): Promise<void> {
    const trips = this.pending.slice(0, n);
    this.pending = this.pending.slice(n);
    const parts: ChunkPart[] = [];
    for (let left = n; left > 0;) {
      const first = this.pendingParts[0];
      const taken = Math.min(first.trips, left);
      parts.push({ file: first.file, trips: taken });
      left -= taken;
      first.trips -= taken;
      if (first.trips === 0) this.pendingParts.shift();
    }
    this.partsOf.push(parts);
    await this.queue(
      this.seq - 1,
      trips,
      parts.map((p) => p.trips),
    );
  }
}

/** After this long with no chunk done, the caller says that it is waiting for worker processes. */
const IDLE_NOTICE_MS = 15_000;

/**
 * Chunks queued and not yet done at most: the reader waits beyond that, so the store holds a bounded
 * amount of chunk input (about 1.3 MB a chunk of 5,000 trips) however large the files and slow the workers.
 */
export const MAX_OUTSTANDING_CHUNKS = 32;

/** Follows an ingest's chunks in the store, logging each change of how many are done. */
class ChunkTracker {
  queued = 0;
  private shown = -1;
  private changedAt = Date.now();
  private noticed = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly ingestId: string,
    private readonly pollMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Polls until at most `outstanding` chunks are still to do; answers every chunk. */
  async waitUntil(outstanding: number): Promise<IngestChunkState[]> {
    for (;;) {
      const chunks = await this.ctx.store.ingestChunks.list(this.ingestId);
      const finished = chunks.filter((c) => c.state !== "queued");
      this.report(finished);
      if (this.queued - finished.length <= outstanding) return chunks;
      await new Promise((r) => setTimeout(r, this.pollMs));
    }
  }

  private report(finished: IngestChunkState[]): void {
    if (this.queued === 0) return;
    if (finished.length !== this.shown) {
      this.shown = finished.length;
      this.changedAt = Date.now();
      const stored = finished.reduce((sum, c) => sum + Number(c.result?.stored ?? 0), 0);
      this.log(
        `chunks: ${finished.length}/${this.queued} done, ${stored.toLocaleString("en-US")} trips stored`,
      );
    } else if (!this.noticed && Date.now() - this.changedAt > IDLE_NOTICE_MS) {
      this.noticed = true;
      this.log(
        "no chunk finished for a while: is a `streetflow serve --role worker` (or --role all) process running on this database and Redis?",
      );
    }
  }
}

function reportOf(
  runs: FileRun[],
  chunks: IngestChunkState[],
  partsOf: ChunkPart[][],
  problems: ProblemList,
): ChunkedIngestReport {
  const report: ChunkedIngestReport = { ...emptyIngestReport(), chunks: chunks.length, failedChunks: [] };
  const counts = runs.map((run) => fileCounts(run.counts));
  for (const chunk of chunks) {
    if (chunk.state === "failed")
      report.failedChunks.push(`chunk ${chunk.seq + 1}: ${chunk.failure ?? "failed"}`);
    const result = chunk.result as IngestChunkResult | null;
    if (!result) continue;
    const parts = partsOf[chunk.seq];
    // A chunk of one file has no parts in its result; nor has one stored by a worker of the version before,
    // which counted a chunk of several files whole: the report says so.
    if (result.parts) parts.forEach((p, i) => addMatchCounts(counts[p.file], result.parts![i]));
    else addMatchCounts(counts[parts[0].file], result);
    if (!result.parts && parts.length > 1)
      problems.add(
        `chunk ${chunk.seq + 1}: its worker (an earlier version) counted its ${parts.length} files' trips together, all under ${basename(runs[parts[0].file].path)}`,
      );
    result.problems.forEach((p) => problems.add(p));
    problems.more += result.moreProblems;
  }
  runs.forEach((run, i) => addFileReport(report, run.path, counts[i]));
  report.problems = problems.kept;
  report.moreProblems = problems.more;
  return report;
}

/** Each whole file (read to its end, every chunk of its trips stored) is recorded as an ingest run; then the months are compacted. */
async function recordRuns(
  ctx: AppContext,
  country: string,
  source: TraceSource,
  log: (line: string) => void,
  report: ChunkedIngestReport,
  runs: FileRun[],
  whole: (file: number) => boolean,
): Promise<void> {
  for (const [i, run] of runs.entries()) {
    const counts = report.files[i].counts;
    log(`${run.path}: done, ${progressLine(counts)}`);
    if (whole(i))
      await recordIngestRun(ctx, {
        country,
        source,
        path: run.path,
        startedAt: run.startedAt,
        counts,
        digest: run.digest,
      });
  }
  await compactStored(ctx, country, log);
}

function emptyFileCounts(): SplitFileCounts {
  return { ...emptySplitCounts(), readErrors: 0, interrupted: 0 };
}

/** The reader's counts of a file as the ingest report's counts (the chunks add the rest). */
function fileCounts(read: SplitFileCounts): IngestCounts {
  return { ...emptyIngestCounts(), ...structuredClone(read) };
}
