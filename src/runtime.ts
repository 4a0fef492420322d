import { databaseFile } from "./config.js";
import { NetworkRegistry } from "./engine/network/registry.js";
import { SqliteStore } from "./store/sqlite/sqlite-store.js";
import { describeStore, openStore, withQueueFromEnv, type StoreDescription } from "./store/open.js";
import type { Store } from "./app/ports/store.js";

/** What every command and the server share: the store and the networks read from it. */
export interface Runtime {
  dataDir: string;
  store: Store;
  /** How worker threads open this store (default: the SQLite file of the data directory). */
  storeDescription?: StoreDescription;
  networks: NetworkRegistry;
}

export function openRuntime(dataDir: string): Runtime {
  const store = new SqliteStore(databaseFile(dataDir));
  return {
    dataDir,
    store,
    storeDescription: { kind: "sqlite", file: store.file },
    networks: new NetworkRegistry(async (c) => await store.network.loadSegments(c)),
  };
}

/**
 * The runtime of `serve` and of every CLI command: PostgreSQL and Redis when their URLs are set
 * (docs/deployment.md), else SQLite. Commands that queue no job pass `jobQueue: false` and so open no
 * Redis connection.
 */
export async function openServerRuntime(
  dataDir: string,
  options: { jobQueue?: boolean } = {},
): Promise<Runtime> {
  const storeDescription = describeStore(databaseFile(dataDir));
  const opened = await openStore(storeDescription);
  const store = options.jobQueue === false ? opened : withQueueFromEnv(opened);
  const networks = new NetworkRegistry(async (c) => await store.network.loadSegments(c));
  return { dataDir, store, storeDescription, networks };
}
