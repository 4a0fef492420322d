import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DemoSimulations } from "../../src/main/demo-simulation.js";
import { writeSimulation, Simulation, type SimulateOptions } from "../../src/engine/simulate/index.js";
import { gridNetwork } from "../helpers/grid-network.js";

const network = gridNetwork({ size: 10 });
const options = (seed: number): SimulateOptions => ({
  from: "2025-01",
  to: "2025-03",
  tripsPerDay: 20,
  seed,
  source: "lbs",
});

/** A demo simulation thread and a directory for its files, both gone after the test. */
function simulationsFor(t: TestContext, prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const simulations = new DemoSimulations(network);
  t.after(async () => {
    await simulations.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, simulations };
}

test("the demo's worker thread writes the month files the main thread would, each named once complete", async (t) => {
  const { dir, simulations } = simulationsFor(t, "sf-demo-sim-");
  // Two asked at once run one after the other on the one thread, each yielding its own files.
  const first = simulations.months(join(dir, "worker-a"), options(1));
  const second = simulations.months(join(dir, "worker-b"), options(2));
  for (const [files, seed, name] of [
    [first, 1, "a"],
    [second, 2, "b"],
  ] as const) {
    const expected = writeSimulation(
      new Simulation(network, options(seed)).trips(),
      join(dir, `main-${name}`),
    );
    const seen: string[] = [];
    for await (const file of files) {
      // Complete when named: its content is already that of the whole month.
      seen.push(file);
      const month = expected.months[seen.length - 1];
      assert.equal(file, join(dir, `worker-${name}`, `traces-${month.month}.csv`));
      assert.equal(readFileSync(file, "utf8"), readFileSync(month.traces, "utf8"));
      // The demo never reads the ground truth, so the worker does not write it.
      assert.equal(existsSync(join(dir, `worker-${name}`, `ground-truth-${month.month}.jsonl`)), false);
    }
    assert.equal(seen.length, 3);
  }
});

test("simulations asked at once run in the order asked", async (t) => {
  const { dir, simulations } = simulationsFor(t, "sf-demo-sim-order-");
  const asked = [1, 2, 3, 4].map((seed) => simulations.months(join(dir, `sim-${seed}`), options(seed)));
  const finished: number[] = [];
  await Promise.all(
    asked.map(async (files, i) => {
      for await (const _ of files);
      finished.push(i);
    }),
  );
  assert.deepEqual(finished, [0, 1, 2, 3]);
});

test("a simulation that fails on the worker fails the caller's iteration", async (t) => {
  const simulations = new DemoSimulations(network);
  t.after(() => simulations.close());
  const files = simulations.months(join(tmpdir(), "sf-demo-sim-never"), { ...options(1), from: "2025-13" });
  await assert.rejects(async () => {
    for await (const file of files) assert.fail(`no file expected, got ${file}`);
  });
});
