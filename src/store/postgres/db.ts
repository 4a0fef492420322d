import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { BinaryCopyOut, type CopyRow } from "./copy-out.js";

/**
 * Connection pool settings. Every API process and every worker holds its own pool, so the sum of
 * `max` over all processes must stay below the server's `max_connections` (100 by default).
 */
export interface PoolSettings {
  /** Connections held at most (STREETFLOW_DATABASE_POOL_MAX, default 10). */
  max: number;
  /** An idle connection is closed after this long (ms). */
  idleTimeoutMillis: number;
  /** Waiting for a free connection fails after this long (ms): a saturated pool answers an error, not a hang. */
  connectionTimeoutMillis: number;
  /** The server cancels a statement running longer than this (ms; STREETFLOW_DATABASE_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMillis: number;
}

export function poolSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): PoolSettings {
  return {
    max: positive(env.STREETFLOW_DATABASE_POOL_MAX, 10),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    statementTimeoutMillis: positive(env.STREETFLOW_DATABASE_STATEMENT_TIMEOUT_MS, 120_000),
  };
}

/**
 * The pool of one worker thread: a heavy-request thread (src/main/heavy-worker.ts) runs one request at a
 * time, reading with at most two statements at once (totals or rollups, and details); an analysis thread
 * (src/main/analysis-worker.ts) one task at a time, its scan fetching the next page while one is used. So
 * a small pool (STREETFLOW_DATABASE_THREAD_POOL_MAX, default 2) serves each; the process's own pool keeps
 * STREETFLOW_DATABASE_POOL_MAX. Budget per process: POOL_MAX + threads × THREAD_POOL_MAX.
 */
export function threadPoolSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): PoolSettings {
  return { ...poolSettingsFromEnv(env), max: positive(env.STREETFLOW_DATABASE_THREAD_POOL_MAX, 2) };
}

function positive(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n > 0 ? n : fallback;
}

// bigint and numeric arrive as numbers: ids, epoch milliseconds and sums stay far below 2^53.
const toNumber = (value: string) => Number(value);
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC
      ? toNumber
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export function createPool(url: string, settings: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: settings.max,
    idleTimeoutMillis: settings.idleTimeoutMillis,
    connectionTimeoutMillis: settings.connectionTimeoutMillis,
    statement_timeout: settings.statementTimeoutMillis,
    application_name: "streetflow",
    types,
  });
  // An idle connection the server drops (restart, network) must not crash the process.
  pool.on("error", () => {});
  return pool;
}

type Queryable = pg.Pool | pg.PoolClient;

/** One name per statement text, the same in every store of the process (node-postgres keys its per-connection cache by name). */
const statementNames = new Map<string, string>();
const statementName = (sql: string): string => {
  let name = statementNames.get(sql);
  if (!name) statementNames.set(sql, (name = `streetflow_${statementNames.size + 1}`));
  return name;
};

/**
 * Queries on the pool, or on the transaction's connection while `transaction` runs: repositories
 * need not know whether they are inside one (AsyncLocalStorage carries the connection).
 */
export class PgDb {
  private readonly current = new AsyncLocalStorage<pg.PoolClient>();
  /** Transactions open now: the context is tracked only while there are some (see `transaction`). */
  private open = 0;

  constructor(readonly pool: pg.Pool) {}

  private get client(): Queryable {
    return this.current.getStore() ?? this.pool;
  }

  async rows<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.client.query(sql, params)).rows as R[];
  }

  /**
   * `rows` as a named (prepared) statement: each connection parses and plans it once, then only binds
   * and runs it. For the hot reads, whose text never changes (arrays travel as one parameter).
   */
  async prepared<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.client.query({ name: statementName(sql), text: sql, values: params })).rows as R[];
  }

  async row<R>(sql: string, params: unknown[] = []): Promise<R | undefined> {
    return (await this.rows<R>(sql, params))[0];
  }

  /** Rows the statement changed. */
  async run(sql: string, params: unknown[] = []): Promise<number> {
    return (await this.client.query(sql, params)).rowCount ?? 0;
  }

  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }

  /** One transaction; a call inside another joins it (all of it commits or none). */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn();
    const client = await this.pool.connect();
    this.open++;
    try {
      await client.query("BEGIN");
      const result = await this.current.run(client, fn);
      await client.query("COMMIT");
      return result;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      client.release();
      // Node 20 runs a hook on every promise of the process while an AsyncLocalStorage is enabled; with no
      // transaction open no one needs the context (`run` enables it again).
      if (--this.open === 0) this.current.disable();
    }
  }

  /**
   * The rows of `COPY (query) TO STDOUT (FORMAT binary)`, as raw field bytes (copy-out.ts): bytea
   * without the text format's hex. COPY takes no parameters: `query` holds literals (pg.escapeLiteral).
   */
  async copyRows(query: string): Promise<CopyRow[]> {
    const copy = new BinaryCopyOut(`COPY (${query}) TO STDOUT (FORMAT binary)`);
    const joined = this.current.getStore();
    if (joined) return await copy.run(joined);
    const client = await this.pool.connect();
    try {
      return await copy.run(client);
    } finally {
      client.release();
    }
  }

  /** On a connection of its own, outside the caller's transaction (DDL that must not wait for it). */
  async outside(sql: string, params: unknown[] = []): Promise<void> {
    await this.pool.query(sql, params);
  }
}

/** PostgreSQL's unique_violation. */
export const isUniqueViolation = (e: unknown) => e instanceof Error && "code" in e && e.code === "23505";

/** `$1, $2, …` from `start`, one per value. */
export const placeholders = (count: number, start = 1) =>
  Array.from({ length: count }, (_, i) => `$${start + i}`).join(", ");

/** Numbers the bare `$` marks of a template `$1, $2, …` in order; answers the text and the next free number. */
export function numbered(template: string): { sql: string; next: number } {
  let n = 0;
  const sql = template.replace(/\$(?!\d)/g, () => `$${++n}`);
  return { sql, next: n + 1 };
}
