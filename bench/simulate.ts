/**
 * `npm run bench -- simulate [gridSize=50] [tripsPerDay=50] [months=12]`: one
 * simulated period on a hand-built grid (size 50 ≈ 4,900 segments), written to a temp dir.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Simulation } from "../src/engine/simulate/index.js";
import { writeSimulation } from "../src/engine/simulate/writers.js";
import { gridNetwork } from "../test/helpers/grid-network.js";

export default async function run(args: string[]): Promise<Record<string, unknown>> {
  const [size = 50, tripsPerDay = 50, months = 12] = args.map(Number);
  const network = gridNetwork({ size });
  const out = mkdtempSync(join(tmpdir(), "bench-sim-"));
  try {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const to = `2025-${String(months).padStart(2, "0")}`;
    const sim = new Simulation(network, { from: "2025-01", to, tripsPerDay, seed: 1, source: "mixed" });
    const summary = writeSimulation(sim.trips(), out);
    const used = process.cpuUsage(cpu);
    return {
      segments: network.size,
      tripsPerDay,
      months,
      trips: summary.trips,
      points: summary.points,
      devices: sim.devices.length,
      trees: sim.planner.stats.trees,
      treeReuses: sim.planner.stats.hits,
      wallMs: Math.round(performance.now() - started),
      cpuMs: Math.round((used.user + used.system) / 1000),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
