import { MessageChannel, type MessagePort } from "node:worker_threads";
import { OrderedPool } from "../engine/ordered-pool.js";
import type { Network } from "../engine/network/network.js";
import type { SimulateOptions } from "../engine/simulate/index.js";
import type { SimulationTask } from "./demo-simulation-worker.js";

/** Built, the worker is demo-simulation-worker.js; from TypeScript sources a shim registers tsx first. */
const FROM_SOURCES = import.meta.url.endsWith(".ts");
const WORKER = new URL(
  FROM_SOURCES ? "./demo-simulation-worker.ts" : "./demo-simulation-worker.js",
  import.meta.url,
);
const ENTRY = FROM_SOURCES ? new URL("../engine/tsx-worker.mjs", import.meta.url) : WORKER;

/**
 * Simulates the demo's traces on one worker thread while the caller ingests them: each simulation's month
 * files come as soon as they are written, so matching and storing month n overlaps simulating month n + 1
 * (on a first start the main thread was the critical path, and simulating was a fifth of it). Simulations
 * asked one after the other run in that order on the one thread; the files are those the same simulation
 * writes on the main thread.
 */
export class DemoSimulations {
  private readonly pool: OrderedPool;

  constructor(network: Network) {
    this.pool = new OrderedPool({
      filename: ENTRY.href,
      minThreads: 1,
      maxThreads: 1,
      workerData: { tsxTarget: WORKER.href, country: network.country, segments: network.segments },
    });
  }

  /** The simulation's month trace files (`dir`/traces-YYYY-MM.csv) in month order, each once complete. */
  months(dir: string, options: SimulateOptions): AsyncIterable<string> {
    const { port1, port2 } = new MessageChannel();
    const task: SimulationTask = { dir, options, port: port2 };
    const done = this.pool.run<number>(task, { transferList: [port2] });
    return filesFrom(port1, done);
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

/** File names posted on `port` until its null; the task's failure, if it fails, is thrown in their place. */
async function* filesFrom(port: MessagePort, done: Promise<number>): AsyncGenerator<string> {
  const posted: (string | null)[] = [];
  let failure: { error: unknown } | null = null;
  let wake = () => {};
  port.on("message", (file: string | null) => {
    posted.push(file);
    wake();
  });
  done.catch((error: unknown) => {
    failure = { error };
    wake();
  });
  try {
    for (;;) {
      const file = posted.shift();
      if (file === null) return;
      if (file !== undefined) yield file;
      else if (failure) throw (failure as { error: unknown }).error;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    port.close();
  }
}
