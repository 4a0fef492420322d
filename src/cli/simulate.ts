import type { Command } from "commander";
import { Option } from "commander";
import { toDomainError } from "../app/error-mapping.js";
import { fail } from "../domain/errors.js";
import type { Network } from "../engine/network/network.js";
import { Simulation } from "../engine/simulate/index.js";
import { writeSimulation } from "../engine/simulate/writers.js";
import { storeTransitRiders } from "../app/transit.js";
import { withContext } from "./context.js";

interface SimulateCliOptions {
  country: string;
  from: string;
  to: string;
  tripsPerDay: string;
  seed: string;
  out: string;
  source: "lbs" | "telematics" | "mixed";
  samplingS?: string;
  noiseM?: string;
  devices?: string;
  presence?: string;
  transitRiders?: string;
}

export function simulateCommand(program: Command): void {
  program
    .command("simulate")
    .description("generate synthetic GPS traces and their ground truth on an imported country's network")
    .requiredOption("--country <code>", "country whose imported network is used")
    .requiredOption("--from <YYYY-MM>", "first month (UTC)")
    .requiredOption("--to <YYYY-MM>", "last month, inclusive")
    .requiredOption("--trips-per-day <n>", "mean trips per day")
    .requiredOption("--seed <s>", "integer seed; same seed and options give the same files")
    .requiredOption("--out <dir>", "output directory")
    .addOption(
      new Option("--source <source>", "trace source")
        .choices(["lbs", "telematics", "mixed"])
        .default("mixed"),
    )
    .option("--sampling-s <n>", "sampling interval in seconds (telematics fixed, lbs mean)")
    .option("--noise-m <n>", "GPS noise σ in metres")
    .option("--devices <n>", "number of devices (default: derived from trips per day)")
    .option(
      "--presence <share>",
      "share of days (0..1] a device is seen, as in a location panel; more devices make the same trips (default 1)",
    )
    .option(
      "--transit-riders <n>",
      "also store n transit rider journeys per day (bus or rail ride with its walks) in the trip store, " +
        "on the bus routes and rail lines imported with the network",
    )
    .action((opts: SimulateCliOptions) =>
      withContext(program, async (ctx) => {
        const { networks } = ctx;
        const network = await networks.get(opts.country);
        if (!network) {
          throw fail("unknown_country", { country: opts.country });
        }
        const ridersPerDay = transitRidersOf(opts);
        const sim = simulationOf(network, opts);
        const started = Date.now();
        const summary = writeSimulation(sim.trips(), opts.out, (m) =>
          console.log(`${m.month}: ${m.trips} trips, ${m.points} points → ${m.traces}, ${m.groundTruth}`),
        );
        const files = summary.months.flatMap((m) => [m.traces, m.groundTruth]);
        console.log(
          `simulated ${summary.trips} trips, ${summary.points} points, ${sim.devices.length} devices ` +
            `(${summary.devices} travelled) on ${network.size} segments in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
            `${files.length} files in ${opts.out}`,
        );
        if (ridersPerDay !== undefined) {
          const seed = numberOption(opts.seed, "--seed");
          await storeTransitRiders(
            ctx,
            opts.country,
            { from: opts.from, to: opts.to, ridersPerDay, seed },
            console.log,
          );
        }
      }),
    );
}

function simulationOf(network: Network, opts: SimulateCliOptions): Simulation {
  const options = {
    from: opts.from,
    to: opts.to,
    tripsPerDay: numberOption(opts.tripsPerDay, "--trips-per-day"),
    seed: numberOption(opts.seed, "--seed"),
    source: opts.source,
    samplingS: optionalNumber(opts.samplingS, "--sampling-s"),
    noiseM: optionalNumber(opts.noiseM, "--noise-m"),
    devices: optionalNumber(opts.devices, "--devices"),
    presence: optionalNumber(opts.presence, "--presence"),
  };
  try {
    return new Simulation(network, options);
  } catch (err) {
    // The generator refuses bad options with an EngineError; the CLI reports them as one line.
    throw toDomainError(err);
  }
}

/** Checked before the (long) simulation, so a typo costs nothing. */
function transitRidersOf(opts: SimulateCliOptions): number | undefined {
  if (opts.transitRiders === undefined) return undefined;
  const riders = numberOption(opts.transitRiders, "--transit-riders");
  if (!(riders > 0)) throw fail("invalid_option", { reason: "--transit-riders must be positive" });
  return riders;
}

function numberOption(value: string, name: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n))
    throw fail("invalid_option", { reason: `${name} must be a number` });
  return n;
}

function optionalNumber(value: string | undefined, name: string): number | undefined {
  return value === undefined ? undefined : numberOption(value, name);
}
