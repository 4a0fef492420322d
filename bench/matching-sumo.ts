/**
 * Matching accuracy on independent traces: `npm run bench -- matching-sumo [intervals=10,30] [noiseM=10] [fixture]`.
 * Cars simulated by SUMO on the bundled Monaco extract (bench/lib/sumo-monaco.ts; built once when SUMO
 * is installed, else the committed subset in test/fixtures/sumo-monaco.json, also forced by `fixture`),
 * sampled every 10 s and 30 s with Gaussian noise per axis. Recall is the share of the true route's
 * length that was matched, precision the share of the matched length on the true route (by segment
 * length, bench/lib/route-truth.ts); extra trips are pieces beyond one per car.
 */
import { loadavg } from "node:os";
import { prepareMatching } from "../src/engine/matching/context.js";
import { Network } from "../src/engine/network/network.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { measureAccuracy, summary } from "./lib/route-truth.js";
import { fixtureVehicles, sumoVehicles } from "./lib/sumo-monaco.js";
import { MONACO_PBF } from "../test/helpers/bundled-data.js";

export default async function matchingSumoBench(args: string[]): Promise<Record<string, unknown>> {
  const useFixture = args.includes("fixture");
  const [intervals = "10,30", noise = "10"] = args.filter((a) => a !== "fixture");
  const full = useFixture ? null : await sumoVehicles();
  const vehicles = full ?? fixtureVehicles();
  const network = new Network("MC", await readOsmSegments(MONACO_PBF));
  // As a service matches: route balls precomputed.
  prepareMatching(network);
  const results: Record<string, unknown> = {};
  for (const intervalS of intervals.split(",").map(Number)) {
    results[`s${intervalS}`] = summary(
      measureAccuracy(network, vehicles, intervalS, { noiseM: Number(noise) }),
    );
  }
  return {
    source: full ? "SUMO scenario (var/bench/sumo-monaco)" : "fixture (test/fixtures/sumo-monaco.json)",
    cars: vehicles.length,
    noiseM: Number(noise),
    ...results,
    loadAvg1m: Number(loadavg()[0].toFixed(2)),
  };
}
