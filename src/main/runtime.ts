import { databaseFile } from "../config/config.js";
import { storeNetworks } from "../app/networks.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import { describeStore, openStore, withQueueFromEnv } from "../store/open.js";
import type { AppContext } from "../app/context.js";

/** The job runner's worker thread entry (src/main/analysis-worker.ts; .js when built). */
export const ANALYSIS_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./analysis-worker.ts" : "./analysis-worker.js",
  import.meta.url,
).href;

/** The commands' context: the SQLite file of the data directory. */
export function openContext(dataDir: string): AppContext {
  const store = new SqliteStore(databaseFile(dataDir));
  return {
    store,
    storeDescription: { kind: "sqlite", file: store.file },
    networks: storeNetworks(store.network),
  };
}

/**
 * The context of `serve` and of every CLI command: PostgreSQL and Redis when their URLs are set
 * (docs/deployment.md), else SQLite. Commands that queue no job pass `jobQueue: false` and so open no
 * Redis connection.
 */
export async function openServerContext(
  dataDir: string,
  options: { jobQueue?: boolean } = {},
): Promise<AppContext> {
  const storeDescription = describeStore(databaseFile(dataDir));
  const opened = await openStore(storeDescription);
  const store = options.jobQueue === false ? opened : await withQueueFromEnv(opened);
  return { store, storeDescription, networks: storeNetworks(store.network) };
}
