import { databaseFile } from "../config/config.js";
import { NetworkRegistry } from "../engine/network/registry.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import { describeStore, openStore, withQueueFromEnv } from "../store/open.js";
import type { Store } from "../app/ports/store.js";
import type { AppContext } from "../app/context.js";

/** The job runner's worker thread entry (src/main/analysis-worker.ts; .js when built). */
export const ANALYSIS_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./analysis-worker.ts" : "./analysis-worker.js",
  import.meta.url,
).href;

/** The networks of a store, each loaded on first use. */
export const networksOf = (store: Store) =>
  new NetworkRegistry(async (c) => await store.network.loadSegments(c));

/** The commands' context: the SQLite file of the data directory. */
export function openContext(dataDir: string): AppContext {
  const store = new SqliteStore(databaseFile(dataDir));
  return { store, storeDescription: { kind: "sqlite", file: store.file }, networks: networksOf(store) };
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
  const store = options.jobQueue === false ? opened : withQueueFromEnv(opened);
  return { store, storeDescription, networks: networksOf(store) };
}
