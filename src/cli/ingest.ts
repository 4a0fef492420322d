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
import { formatIngestReport, ingestFiles } from "../app/ingest.js";
import { withContext } from "./context.js";

/** Builds the map matcher for a country's network. */
export type MatcherFactory = (network: Network) => TripMatcher;

interface IngestCliOptions {
  country: string;
  source: TraceSource;
  vehicleClass: VehicleClass;
  batchSize: string;
  threads: string;
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
      "worker threads that map-match (default: one per core; 1 matches on the main thread)",
      String(os.availableParallelism()),
    )
    .option("--batch-size <n>", "matched trips per store transaction", String(DEFAULT_BATCH_TRIPS))
    .action((files: string[], opts: IngestCliOptions) =>
      withContext(program, async (ctx) => {
        const batchSize = Number(opts.batchSize);
        if (!Number.isInteger(batchSize) || batchSize < 1) throw fail("invalid_batch_size");
        const threads = Number(opts.threads);
        if (!Number.isInteger(threads) || threads < 1) throw fail("invalid_threads");
        const network = await ctx.networks.get(opts.country);
        if (!network) throw fail("unknown_country", { country: opts.country });
        const stop = stopOnSignals();
        const report = await ingestFiles(ctx, files, {
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
        for (const line of formatIngestReport(report)) console.log(line);
        if (report.interrupted) {
          console.error(
            `ingest interrupted by ${report.interrupted}: every stored batch is complete; ` +
              "run the same command again to finish (trips already stored are skipped)",
          );
          process.exitCode = 128 + (os.constants.signals[report.interrupted as NodeJS.Signals] ?? 0);
        }
      }),
    );
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
