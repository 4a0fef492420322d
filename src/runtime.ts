import { databaseFile } from "./config.js";
import { NetworkRegistry } from "./engine/network/registry.js";
import { SqliteStore } from "./store/sqlite/sqlite-store.js";
import type { Store } from "./app/ports/store.js";

/** What every command and the server share: the store and the networks read from it. */
export interface Runtime {
  dataDir: string;
  store: Store;
  networks: NetworkRegistry;
}

export function openRuntime(dataDir: string): Runtime {
  const store = new SqliteStore(databaseFile(dataDir));
  return { dataDir, store, networks: new NetworkRegistry(async (c) => await store.network.loadSegments(c)) };
}
