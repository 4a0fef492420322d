import type { NetworkRegistry } from "../engine/network/registry.js";
import type { Store, StoreDescription } from "./ports/store.js";

/**
 * What every use case runs against: the store and the road networks read from it. The composition root
 * builds one per process (src/main/runtime.ts), a worker thread one for its read-only connection.
 */
export interface AppContext {
  store: Store;
  networks: NetworkRegistry;
  /**
   * How another thread or process opens this same store (the job runner's worker threads); absent for a
   * store only this thread reaches, such as a test's in-memory SQLite.
   */
  storeDescription?: StoreDescription;
}
