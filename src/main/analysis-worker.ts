/**
 * The job runner's worker thread (src/jobs/runner.ts starts it, one per runner, and keeps it warm):
 * opens its own read-only store from the runner's description through the store factory, once, then
 * computes the tasks the runner posts, one at a time, until the runner terminates it.
 */
import { parentPort, workerData } from "node:worker_threads";
import {
  AnalysisThreadState,
  runAnalysisInThread,
  warmAnalysisThread,
  type ThreadData,
  type WarmInput,
  type WorkerInput,
} from "../jobs/analysis-thread.js";
import { storeNetworks } from "../app/networks.js";
import { openStore } from "../store/open.js";

if (parentPort) {
  const port = parentPort;
  const { store: description } = workerData as ThreadData;
  // A thread computes one task at a time, its scan reading ahead by one page: PostgreSQL gets a thread's
  // small pool (STREETFLOW_DATABASE_THREAD_POOL_MAX), not a process's.
  const store = await openStore(description, { readonly: true, thread: true });
  // Every task reads the country's import time before it uses the network (recheck 0): a network
  // imported again since the thread loaded it is never used, however recent the import.
  const networks = storeNetworks(store.network, 0);
  const thread = new AnalysisThreadState({ store, storeDescription: description, networks });
  // Tasks run one after another: the runner posts the next only once this one has answered.
  let queue = Promise.resolve();
  port.on("message", (input: WorkerInput | WarmInput) => {
    queue = queue.then(() =>
      "warm" in input
        ? warmAnalysisThread(thread, input)
        : runAnalysisInThread(thread, input, (m, transfer) => port.postMessage(m, transfer ?? [])),
    );
  });
}
