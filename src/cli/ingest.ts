import os from "node:os";
import { Option, type Command } from "commander";
import { fail } from "../domain/errors.js";
import { tripMatcher } from "../engine/matching/index.js";
import { DEFAULT_BATCH_TRIPS, type TripMatcher } from "../engine/ingest/pipeline.js";
import type { Network } from "../engine/network/network.js";
import {
  TRACE_SOURCES,
  VEHICLE_CLASSES,
  type TraceSource,
  type VehicleClass,
} from "../engine/trips/types.js";
import { formatIngestReport, ingestFiles, type IngestReport } from "../app/ingest.js";
import { DEFAULT_CHUNK_TRIPS, ingestFilesInChunks, type ChunkedIngestReport } from "../app/ingest-chunked.js";
import type { AppContext } from "../app/context.js";
import { withContext } from "./context.js";

/** Builds the map matcher for a country's network. */
export type MatcherFactory = (network: Network) => TripMatcher;

interface IngestCliOptions {
  country: string;
  source: TraceSource;
  vehicleClass: VehicleClass;
  batchSize: string;
  threads: string;
  chunkTrips: string;
}

/** `streetflow ingest FILE...`: read, split, map-match and store trips. */
export function ingestCommand(program: Command, matcherFor: MatcherFactory = tripMatcher): void {
  program
    .command("ingest <files...>")
    .description(
      "read GPS traces (.csv, .gpx, .geojson, optionally .gz), split into trips, match and store them",
    )
    .requiredOption("--country <code>", "country whose road network the traces are matched on")
    .addOption(new Option("--source <source>", "kind of trace").choices(TRACE_SOURCES).makeOptionMandatory())
    .addOption(
      new Option("--vehicle-class <class>", "class of points whose file has no vehicle_class column")
        .choices(VEHICLE_CLASSES)
        .default("personal"),
    )
    .option(
      "--threads <n>",
      "worker threads that map-match an input of 6.5 MB or more (default: one per core; 1, or a smaller input, matches on the main thread)",
      String(os.availableParallelism()),
    )
    .option("--batch-size <n>", "matched trips per store transaction", String(DEFAULT_BATCH_TRIPS))
    .option(
      "--chunk-trips <n>",
      "with STREETFLOW_REDIS_URL: trips per chunk that worker processes match and store; 0 ingests here (env STREETFLOW_INGEST_CHUNK_TRIPS)",
      process.env.STREETFLOW_INGEST_CHUNK_TRIPS?.trim() || String(DEFAULT_CHUNK_TRIPS),
    )
    .action((files: string[], opts: IngestCliOptions) => {
      const chunkTrips = Number(opts.chunkTrips);
      if (!Number.isInteger(chunkTrips) || chunkTrips < 0) throw fail("invalid_chunk_trips");
      // The distributed deployment's queue reaches every worker process: they match the chunks.
      const distributed = Boolean(process.env.STREETFLOW_REDIS_URL) && chunkTrips > 0;
      return withContext(
        program,
        async (ctx) => {
          const report = distributed
            ? await ingestChunked(ctx, files, opts, chunkTrips)
            : await ingestHere(ctx, files, opts, matcherFor);
          reportIngest(report);
        },
        { jobQueue: distributed },
      );
    });
}

/** Reads, matches and stores in this process (the matching on `--threads` worker threads). */
async function ingestHere(
  ctx: AppContext,
  files: string[],
  opts: IngestCliOptions,
  matcherFor: MatcherFactory,
): Promise<IngestReport> {
  const batchSize = Number(opts.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw fail("invalid_batch_size");
  const threads = Number(opts.threads);
  if (!Number.isInteger(threads) || threads < 1) throw fail("invalid_threads");
  const network = await ctx.networks.get(opts.country);
  if (!network) throw fail("unknown_country", { country: opts.country });
  const stop = stopOnSignals();
  return await ingestFiles(ctx, files, {
    country: opts.country,
    source: opts.source,
    vehicleClass: opts.vehicleClass,
    matcher: matcherFor(network),
    // Workers run the standard matcher; a matcher given by the caller (tests) runs here.
    threads: matcherFor === tripMatcher ? threads : 1,
    batchSize,
    onProgress: (line) => console.error(line),
    signal: stop.signal,
  }).finally(stop.dispose);
}

/** Reads and splits here; worker processes match and store the chunks (docs/deployment.md). */
async function ingestChunked(
  ctx: AppContext,
  files: string[],
  opts: IngestCliOptions,
  chunkTrips: number,
): Promise<ChunkedIngestReport> {
  const stop = stopOnSignals();
  const report = await ingestFilesInChunks(ctx, files, {
    country: opts.country,
    source: opts.source,
    vehicleClass: opts.vehicleClass,
    chunkTrips,
    onProgress: (line) => console.error(line),
    signal: stop.signal,
  }).finally(stop.dispose);
  if (report.failedChunks.length > 0) {
    console.error(
      `${report.failedChunks.length} of ${report.chunks} chunks failed; their trips are not stored:`,
    );
    for (const line of report.failedChunks) console.error(`  ${line}`);
    console.error("run the same command again to store them (trips already stored are skipped)");
    process.exitCode = 1;
  }
  return report;
}

function reportIngest(report: IngestReport): void {
  for (const line of formatIngestReport(report)) console.log(line);
  if (report.interrupted) {
    console.error(
      `ingest interrupted by ${report.interrupted}: every stored batch is complete; ` +
        "run the same command again to finish (trips already stored are skipped)",
    );
    process.exitCode = 128 + (os.constants.signals[report.interrupted as NodeJS.Signals] ?? 0);
  }
}

const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * The first SIGTERM/SIGINT asks the ingest to stop after the batch in progress (each batch is one
 * transaction, so the store stays consistent); a second one exits at once (SQLite rolls back an
 * unfinished transaction).
 */
function stopOnSignals(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(128 + os.constants.signals[name]);
    console.error(`${name} received: stopping after the batch in progress (send it again to quit at once)`);
    controller.abort(name);
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  const dispose = () => STOP_SIGNALS.forEach((name) => process.off(name, onSignal));
  return { signal: controller.signal, dispose };
}
