/**
 * The job runner's worker thread (src/jobs/runner.ts starts it): opens its own read-only store from the
 * runner's description through the store factory, and computes one analysis over it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { runAnalysisInThread, type WorkerInput } from "../jobs/analysis-thread.js";
import { NetworkRegistry } from "../engine/network/registry.js";
import { openStore } from "../store/open.js";

if (parentPort) {
  const port = parentPort;
  const input = workerData as WorkerInput;
  const store = await openStore(input.store, { readonly: true });
  try {
    const networks = new NetworkRegistry(async (c) => await store.network.loadSegments(c));
    await runAnalysisInThread({ store, storeDescription: input.store, networks }, input, (m) =>
      port.postMessage(m),
    );
  } finally {
    await store.close();
  }
}
