import { createHash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import { resolve } from "node:path";
import { fail } from "../domain/errors.js";
import { SegmentCellAccumulator } from "../engine/counts/segment-cells.js";
import type { Network } from "../engine/network/network.js";
import { networkTimeZone } from "./networks.js";
import { LocalClock } from "../engine/time.js";
import {
  addCounts,
  DEFAULT_BATCH_TRIPS,
  emptyIngestCounts,
  ingestTraceFiles,
  type AheadOfStore,
  type IngestCounts,
  type TripMatcher,
} from "../engine/ingest/pipeline.js";
import { MatchPool } from "../engine/ingest/match-pool.js";
import { formatOf, isGzipped } from "../engine/ingest/open-input.js";
import { TRACE_FILE_KINDS } from "../engine/ingest/read-traces.js";
import { PreparedTrips } from "../engine/trips/prepared-append.js";
import type { MatchedTrip, TraceSource, VehicleClass } from "../engine/trips/types.js";
import type { AppContext } from "./context.js";

export interface IngestFilesOptions {
  country: string;
  source: TraceSource;
  /** Class of points whose file has no vehicle class column. */
  vehicleClass: VehicleClass;
  matcher: TripMatcher;
  /**
   * Worker threads that match (default 1: `matcher`, on this thread). With more, trips are matched
   * by the standard matcher on that many workers while this thread reads and stores; the stored
   * trips are the same as with one.
   */
  threads?: number;
  /**
   * The trace text an input must hold for the `threads` workers to start (default `WORKERS_FROM_BYTES`, a
   * gzip file counted at `GZIP_TEXT_RATIO` times its size; 0: any input); a smaller one is matched by
   * `matcher` on this thread.
   */
  workersFromBytes?: number;
  /**
   * A pool of matching workers the caller keeps (warm across runs, closed by the caller) instead of `threads`,
   * used from the first trip.
   */
  matchPool?: Pick<MatchPool, "match"> & Partial<Pick<MatchPool, "handAhead">>;
  /** Matched trips per store transaction. */
  batchSize?: number;
  /** How many problem messages the report keeps (the rest are only counted). */
  maxProblems?: number;
  onProgress?: (line: string) => void;
  /** Aborting it (SIGTERM/SIGINT) stops the ingest after the batch in progress; see `IngestReport.interrupted`. */
  signal?: AbortSignal;
}

export interface FileIngestReport {
  path: string;
  counts: IngestCounts;
}

export interface IngestReport {
  files: FileIngestReport[];
  totals: IngestCounts;
  /** The first `maxProblems` bad-row and match-failure messages, `file:line: message`. */
  problems: string[];
  /** Problems beyond those kept. */
  moreProblems: number;
  /**
   * Set when `signal` stopped the ingest (to the abort reason, e.g. "SIGTERM"): every stored batch is
   * whole; the files not stored whole (the one being read, and any whose last trips were in the batch in
   * progress) count `interrupted` and are not recorded in the ingest runs; the files after them were not read.
   */
  interrupted?: string;
}

/**
 * Ingests trace files into a country's trip store, one after the other: read,
 * split, match, store, in batches that run on from one file into the next. Each file is recorded in the
 * ingest runs once its trips are stored. Re-running a file stores nothing new: its trips come back as
 * duplicates.
 */
export async function ingestFiles(
  ctx: AppContext,
  files: string[],
  opts: IngestFilesOptions,
): Promise<IngestReport> {
  const { country, paths, log, problems } = startIngest(files, opts);
  const report = emptyIngestReport(problems.kept);
  const onProblem = (message: string) => problems.add(message);

  const network = await requireNetwork(ctx, country);
  const clock = LocalClock.of(await networkTimeZone(ctx.store, country));
  const cells = storeWorkAhead(() => new SegmentCellAccumulator(network, clock));
  const ownPool =
    !opts.matchPool && startsWorkers(paths, opts, log) ? new MatchPool(network, opts.threads!) : null;
  const pool = opts.matchPool ?? ownPool;
  try {
    await ingestEach(ctx, paths, opts, { country, report, cells, pool, log, onProblem });
    report.moreProblems = problems.more;
    return report;
  } finally {
    await ownPool?.close();
  }
}

interface IngestRun {
  country: string;
  report: IngestReport;
  cells: AheadOfStore<BatchAhead>;
  pool: IngestFilesOptions["matchPool"] | null;
  log: (line: string) => void;
  onProblem: (message: string) => void;
}

async function ingestEach(
  ctx: AppContext,
  paths: string[],
  opts: IngestFilesOptions,
  { country, report, cells, pool, log, onProblem }: IngestRun,
): Promise<void> {
  const files = paths.map((path) => ({ path, startedAt: "", digest: new FileDigest() }));
  const done = await ingestTraceFiles(
    files.map(({ path, digest }) => ({ path, onBytes: digest.add })),
    {
      source: opts.source,
      vehicleClass: opts.vehicleClass,
      matcher: opts.matcher,
      matchBatch: pool?.match,
      matchAhead: pool?.handAhead,
      ahead: cells,
      sink: async (trips, ahead) =>
        await storeTrips(ctx, country, trips, ahead!.cells, { talliedAhead: true, prepared: ahead!.trips }),
      batchSize: opts.batchSize,
      onProblem,
      onFileStart: (i) => {
        files[i].startedAt = new Date().toISOString();
        log(`${files[i].path}: reading`);
      },
      onProgress: (i, c) => log(`${files[i].path}: ${progressLine(c)}`),
      onFileStored: async (i, counts) => {
        log(`${files[i].path}: done, ${progressLine(counts)}`);
        await recordIngestRun(ctx, { country, source: opts.source, ...files[i], counts });
      },
      signal: opts.signal,
    },
  );
  done.files.forEach((counts, i) => addFileReport(report, files[i].path, counts));
  if (done.interrupted) {
    report.interrupted = String(opts.signal?.reason ?? "interrupted");
    done.files.forEach((counts, i) => {
      if (counts.interrupted) log(`${files[i].path}: interrupted, ${progressLine(counts)}`);
    });
    // Compaction is skipped too: it only tidies storage, and the next run does it.
    return;
  }
  await compactStored(ctx, country, log);
}

/**
 * The trace text for which an ingest starts its own worker threads (`threads`): ~100,000 fixes of CSV at
 * 60-75 bytes a fix (GPX, ~100-120 bytes a fix, from ~60,000). Started, the workers take ~0.5 s before their
 * first result and match their first trips cold: in a fresh CLI process on 2 cores, a file of 20,000 fixes
 * ingested in 1.4-1.6 s on two workers against 1.0-1.1 s on the main thread; the two broke even at ~90,000
 * fixes, and the workers were ahead from ~165,000 (docs/performance.md, "Stop 49").
 */
export const WORKERS_FROM_BYTES = 6_500_000;

/** A gzip file counts as this many times its size in text (the simulator's CSV traces compress 5.3×). */
const GZIP_TEXT_RATIO = 5;

/** Whether the ingest matches on `threads` workers of its own, as the input is large enough to repay them. */
function startsWorkers(paths: string[], opts: IngestFilesOptions, log: (line: string) => void): boolean {
  const threads = opts.threads ?? 1;
  if (threads <= 1) return false;
  const bytes = paths.reduce(
    (n, path) => n + statSync(path).size * (isGzipped(path) ? GZIP_TEXT_RATIO : 1),
    0,
  );
  const starts = bytes >= (opts.workersFromBytes ?? WORKERS_FROM_BYTES);
  const megabytes = (bytes / 1e6).toFixed(1);
  log(
    starts
      ? `matching on ${threads} worker threads`
      : `matching on the main thread: ${megabytes} MB of traces would not repay starting ${threads} worker threads`,
  );
  return starts;
}

/** Problem messages an ingest report keeps unless told otherwise. */
const DEFAULT_MAX_PROBLEMS = 20;

/** A report of no files yet; `problems` is the list the ingest adds its problems to. */
export function emptyIngestReport(problems: string[] = []): IngestReport {
  return { files: [], totals: emptyIngestCounts(), problems, moreProblems: 0 };
}

/** One file's counts, added to the report's files and totals. */
export function addFileReport(report: IngestReport, path: string, counts: IngestCounts): void {
  report.files.push({ path, counts });
  addCounts(report.totals, counts);
}

/**
 * The report of a later ingest (the next files) added to `report`: its files, totals and problems, the
 * problems kept within `maxProblems`.
 */
export function addIngestReport(
  report: IngestReport,
  more: IngestReport,
  maxProblems = DEFAULT_MAX_PROBLEMS,
): void {
  for (const file of more.files) addFileReport(report, file.path, file.counts);
  const room = Math.max(0, maxProblems - report.problems.length);
  report.problems.push(...more.problems.slice(0, room));
  report.moreProblems += more.moreProblems + Math.max(0, more.problems.length - room);
  report.interrupted ??= more.interrupted;
}

/** The first problem messages, in reading order, and how many more there were. */
export class ProblemList {
  readonly kept: string[] = [];
  more = 0;

  constructor(private readonly max: number) {}

  add(message: string): void {
    if (this.kept.length < this.max) this.kept.push(message);
    else this.more++;
  }
}

/** What every ingest sets up before reading: the country's code, the checked paths, the progress log, the problems. */
export function startIngest(
  files: string[],
  opts: Pick<IngestFilesOptions, "country" | "onProgress" | "maxProblems">,
): { country: string; paths: string[]; log: (line: string) => void; problems: ProblemList } {
  const paths = files.map((f) => resolve(f));
  paths.forEach(assertReadableTrace);
  return {
    country: opts.country.toLowerCase(),
    paths,
    log: opts.onProgress ?? (() => {}),
    problems: new ProblemList(opts.maxProblems ?? DEFAULT_MAX_PROBLEMS),
  };
}

/**
 * Records a file ingested whole as an ingest run (size and digest, so the same file is known again); the
 * digest is the one taken while the ingest read the file.
 */
export async function recordIngestRun(
  ctx: AppContext,
  run: {
    country: string;
    source: TraceSource;
    path: string;
    startedAt: string;
    counts: IngestCounts;
    digest: FileDigest;
  },
): Promise<void> {
  const { digest, ...fields } = run;
  const sizeBytes = statSync(run.path).size;
  await ctx.store.trips.recordIngestRun({
    ...fields,
    sizeBytes,
    sha256: await digest.hex(run.path, sizeBytes),
    finishedAt: new Date().toISOString(),
    counts: { ...run.counts },
  });
}

/**
 * A file's SHA-256, taken from its bytes as the ingest reads them, so the file is read once. A reader that
 * stopped short of the end (a corrupt .gz, a GeoJSON file that did not parse) leaves it incomplete: the
 * file is then read again for it.
 */
export class FileDigest {
  private readonly hash = createHash("sha256");
  private bytes = 0;

  readonly add = (bytes: Buffer): void => {
    this.hash.update(bytes);
    this.bytes += bytes.length;
  };

  async hex(path: string, sizeBytes: number): Promise<string> {
    return this.bytes === sizeBytes ? this.hash.digest("hex") : await sha256Of(path);
  }
}

/**
 * Batches leave many small trip chunks per month, and tallies in parts: tidying them once per run keeps scans
 * reading few rows.
 */
export async function compactStored(ctx: AppContext, country: string, log: (line: string) => void) {
  const { chunksBefore, chunksAfter } = await ctx.store.trips.compact(country);
  if (chunksAfter < chunksBefore) log(`compacted ${chunksBefore} trip chunks into ${chunksAfter}`);
  await ctx.store.segmentStats.compact(country);
}

/**
 * Stores trips that need no map matching (the transit generator's ground truth) as ingest stores
 * matched ones: per-segment tallies with them, in batches, chunks compacted at the end.
 */
export async function storeMatchedTrips(
  ctx: AppContext,
  country: string,
  trips: Iterable<MatchedTrip>,
  batchSize = DEFAULT_BATCH_TRIPS,
): Promise<{ stored: number; duplicates: number }> {
  const cells = new SegmentCellAccumulator(
    await requireNetwork(ctx, country),
    LocalClock.of(await networkTimeZone(ctx.store, country)),
  );
  const totals = { stored: 0, duplicates: 0 };
  let batch: MatchedTrip[] = [];
  const flush = async () => {
    const result = await storeTrips(ctx, country, batch, cells);
    totals.stored += result.inserted;
    totals.duplicates += result.duplicates;
    batch = [];
  };
  for (const trip of trips) if (batch.push(trip) >= batchSize) await flush();
  if (batch.length > 0) await flush();
  await compactStored(ctx, country, () => {});
  return totals;
}

/** What an ingest does of a batch's trips as they are matched, before the batch is stored. */
interface BatchAhead {
  cells: SegmentCellAccumulator;
  trips: PreparedTrips;
}

/**
 * A batch's per-segment tallies counted and its store work prepared as its trips are matched (see
 * AheadOfStore): every trip, as nearly all of an ingest's are new; `storeTrips` counts them again when some
 * were stored before, and the store redoes what it needs of the prepared work.
 */
export function storeWorkAhead(openCells: () => SegmentCellAccumulator): AheadOfStore<BatchAhead> {
  return {
    open: () => ({ cells: openCells(), trips: new PreparedTrips() }),
    add: (ahead, trip) => {
      ahead.cells.addTrip(trip);
      ahead.trips.add(trip);
    },
    tripsOf: (ahead) => ahead.trips.trips,
  };
}

/**
 * New trips and their per-segment tallies are written together: both or neither. With `talliedAhead`,
 * `cells` holds every trip of `trips` already; unless all were new, the stored ones are counted afresh.
 */
export async function storeTrips(
  ctx: AppContext,
  country: string,
  trips: readonly MatchedTrip[],
  cells: SegmentCellAccumulator,
  { talliedAhead = false, prepared }: { talliedAhead?: boolean; prepared?: PreparedTrips } = {},
) {
  return await ctx.store.transaction(async () => {
    const result = await ctx.store.trips.appendTrips(country, trips, prepared);
    // `stored` is `trips` without the duplicates, in order: as long, it is the same trips.
    const tallied = talliedAhead && result.stored.length === trips.length;
    if (talliedAhead && !tallied) cells.drainBatch();
    if (!tallied) for (const trip of result.stored) cells.addTrip(trip);
    await ctx.store.segmentStats.addBatch(country, cells.drainBatch());
    return result;
  });
}

export async function requireNetwork(ctx: AppContext, country: string): Promise<Network> {
  const network = await ctx.networks.get(country);
  if (!network) throw fail("unknown_country", { country });
  return network;
}

export function assertReadableTrace(path: string): void {
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) throw fail("file_not_found", { path });
  if (!formatOf(path)) throw fail("unknown_trace_format", { file: path, formats: TRACE_FILE_KINDS });
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

const n = (v: number) => v.toLocaleString("en-US");

/** More trips stored than read is no mistake: say that the matcher split some (e.g. at a gap in the trace). */
function splitNote(c: IngestCounts): string {
  if (c.splitByMatcher === 0) return "";
  const trips = c.splitByMatcher === 1 ? "1 trip" : `${n(c.splitByMatcher)} trips`;
  return ` (the matcher split ${trips} into more, where the match broke off)`;
}

export function progressLine(c: IngestCounts): string {
  return `${n(c.pointsRead)} points, ${n(c.badRows)} bad rows, ${n(c.trips)} trips, ${n(c.stored)} stored${splitNote(c)}`;
}

/** The report as lines for the terminal. */
export function formatIngestReport(r: IngestReport): string[] {
  const t = r.totals;
  const d = t.droppedPoints;
  const lines = [
    ...(r.interrupted ? [`interrupted:      by ${r.interrupted}, after the last whole batch`] : []),
    `files:            ${r.files.length}`,
    `points read:      ${n(t.pointsRead)}`,
    `bad rows:         ${n(t.badRows)}`,
    `points dropped:   ${n(d.jump)} jumps, ${n(d.outOfOrder)} out of order, ${n(d.duplicate)} duplicates, ${n(d.dwell)} at stops`,
    `trips dropped:    ${n(t.droppedTrips.tooFewPoints)} too few points, ${n(t.droppedTrips.tooShort)} under 200 m, ${n(t.droppedTrips.zeroDuration)} without duration`,
    `trips:            ${n(t.trips)}`,
    `matched trips:    ${n(t.matchedTrips)} (${n(t.unmatchedTrips)} trips unmatched, ${n(t.matchErrors)} match errors, ${n(t.splitByMatcher)} split into more by the matcher)`,
    `stored:           ${n(t.stored)} (${n(t.duplicates)} already stored)`,
  ];
  if (t.readErrors > 0) lines.push(`files cut short:  ${n(t.readErrors)} (unreadable part-way)`);
  if (r.problems.length > 0) lines.push("problems:", ...r.problems.map((p) => `  ${p}`));
  if (r.moreProblems > 0) lines.push(`  ... and ${n(r.moreProblems)} more`);
  return lines;
}
