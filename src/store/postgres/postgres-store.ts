import { PostgresAccounts, PostgresSecurity } from "./accounts.js";
import { PostgresAnalyses, PostgresNotifications, PostgresTags } from "./analyses.js";
import { PostgresCountsResults, PostgresSegmentStats, PostgresUsage } from "./counts.js";
import { createPool, PgDb, poolSettingsFromEnv, type PoolSettings } from "./db.js";
import { PostgresNetwork, PostgresPresetAreas, PostgresZoneSets } from "./geography.js";
import { PostgresJobQueue } from "./job-queue.js";
import { migrate } from "./migrations.js";
import { PostgresIngestChunks } from "./ingest-chunks.js";
import type { Store } from "../../app/ports/store.js";
import { PostgresTrips, PostgresTripStats } from "./trips.js";

export interface PostgresStoreOptions {
  pool?: Partial<PoolSettings>;
  /** Epoch-ms clock of the job queue's leases; tests inject one. */
  clock?: () => number;
}

/**
 * The shared store of a multi-process deployment (STREETFLOW_DATABASE_URL): every API process and
 * worker opens one, with its own connection pool, on the same database. `open` migrates first.
 */
/** The first key of `exclusively`'s two-key advisory locks (any constant, the same in every process). */
const EXCLUSIVE_LOCK = 0x5f_5f_5f_02;

export class PostgresStore implements Store {
  readonly accounts: PostgresAccounts;
  readonly network: PostgresNetwork;
  readonly zoneSets: PostgresZoneSets;
  readonly tripStats: PostgresTripStats;
  readonly segmentStats: PostgresSegmentStats;
  readonly countsResults: PostgresCountsResults;
  readonly usage: PostgresUsage;
  readonly analyses: PostgresAnalyses;
  readonly jobs: PostgresJobQueue;
  readonly trips: PostgresTrips;
  readonly presetAreas: PostgresPresetAreas;
  readonly tags: PostgresTags;
  readonly notifications: PostgresNotifications;
  readonly security: PostgresSecurity;
  readonly ingestChunks: PostgresIngestChunks;

  private constructor(
    readonly db: PgDb,
    options: PostgresStoreOptions,
  ) {
    this.accounts = new PostgresAccounts(db);
    this.network = new PostgresNetwork(db);
    this.zoneSets = new PostgresZoneSets(db);
    this.tripStats = new PostgresTripStats(db);
    this.segmentStats = new PostgresSegmentStats(db);
    this.countsResults = new PostgresCountsResults(db);
    this.usage = new PostgresUsage(db);
    this.analyses = new PostgresAnalyses(db);
    this.jobs = new PostgresJobQueue(db, options.clock);
    this.trips = new PostgresTrips(db);
    this.presetAreas = new PostgresPresetAreas(db);
    this.tags = new PostgresTags(db);
    this.notifications = new PostgresNotifications(db);
    this.security = new PostgresSecurity(db);
    this.ingestChunks = new PostgresIngestChunks(db);
  }

  /** Connects to `url` (postgres://user@host:port/db), applies missing migrations, and answers the store. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const pool = createPool(url, { ...poolSettingsFromEnv(), ...options.pool });
    try {
      await migrate(pool);
    } catch (e) {
      await pool.end();
      throw e;
    }
    return new PostgresStore(new PgDb(pool), options);
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /** A session advisory lock, held on a connection of its own while `fn` uses the pool. */
  async exclusively<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.db.pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock($1, hashtext($2))", [EXCLUSIVE_LOCK, name]);
      try {
        return await fn();
      } finally {
        await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [EXCLUSIVE_LOCK, name]);
      }
    } finally {
      client.release();
    }
  }

  /** Waits for the queries under way, then closes every connection. */
  async close(): Promise<void> {
    await this.db.pool.end();
  }
}
