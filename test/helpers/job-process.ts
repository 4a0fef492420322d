/**
 * A job process for crash tests: `node --import tsx job-process.ts DATA_DIR` runs one JobRunner on the
 * data directory with the test compute (analyses named `hang…` never finish) and an hour-long lease, so
 * a job it held is only taken back early by the dead-owner check. It prints the runner's log lines.
 */
import { databaseFile } from "../../src/config/config.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { ANALYSIS_WORKER, openContext } from "../../src/main/runtime.js";

const dataDir = process.argv[2];
const rt = openContext(dataDir);
await new JobRunner({
  store: rt.store,
  queue: rt.store.jobs,
  workerStore: { kind: "sqlite", file: databaseFile(dataDir) },
  workerModule: ANALYSIS_WORKER,
  leaseMs: 3_600_000,
  pollMs: 50,
  computeModule: new URL("./test-compute.ts", import.meta.url).href,
  log: (line) => console.log(line),
}).start();
