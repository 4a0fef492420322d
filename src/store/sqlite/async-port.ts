import type Database from "better-sqlite3";
import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The synchronous shape of an asynchronous port: what a better-sqlite3 repository implements. SQLite
 * stays synchronous inside this adapter; only the surface the application sees returns promises.
 */
export type Sync<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => AsyncIterable<infer R>
    ? (...args: A) => Iterable<R>
    : T[K] extends (...args: infer A) => Promise<infer R>
      ? (...args: A) => R
      : T[K];
};

/**
 * Serialises access to the one SQLite connection while an asynchronous transaction is open.
 *
 * `store.transaction(fn)` runs `BEGIN IMMEDIATE`, awaits `fn` and commits. While `fn` awaits, other
 * callers (another request, the job runner) could reach the same connection and their statements
 * would silently join — and roll back with — the open transaction. So every port call first checks
 * the gate: calls from inside the transaction (same async context) pass, all others wait until it
 * ends. SQLite has one writer anyway, so this costs no concurrency the database had.
 */
export class TransactionGate {
  private readonly context = new AsyncLocalStorage<symbol>();
  private owner: symbol | null = null;
  private ended: Promise<void> = Promise.resolve();

  constructor(private readonly db: Database.Database) {}

  /** True when a transaction of another caller holds the connection. */
  private blocked(): boolean {
    return this.owner !== null && this.context.getStore() !== this.owner;
  }

  /** Runs `fn` synchronously once no other caller's transaction is open. */
  async call<R>(fn: () => R): Promise<R> {
    // Check and run in one synchronous step: no other continuation can slip in between.
    while (this.blocked()) await this.ended;
    return fn();
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    // Nested: joins the outer transaction (the adapter's own sync transactions use savepoints).
    if (this.owner !== null && this.context.getStore() === this.owner) return fn();
    while (this.blocked()) await this.ended;
    const token = Symbol("transaction");
    let end!: () => void;
    this.ended = new Promise((resolve) => (end = resolve));
    this.owner = token;
    try {
      this.db.exec("BEGIN IMMEDIATE");
      const result = await this.context.run(token, fn);
      this.db.exec("COMMIT");
      return result;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      throw e;
    } finally {
      this.owner = null;
      // Node 20 tracks an enabled AsyncLocalStorage with a hook on every promise of the process; outside a
      // transaction no one asks for the context, so the hook runs only while one is open (`run` enables it).
      this.context.disable();
      end();
    }
  }

  /** Iterates a synchronous iterable one step per gate check, so other callers may run between steps. */
  async *iterate<R>(open: () => Iterable<R>): AsyncGenerator<R> {
    const it = await this.call(() => open()[Symbol.iterator]());
    for (;;) {
      const step = await this.call(() => it.next());
      if (step.done) return;
      yield step.value;
    }
  }
}

/** The asynchronous port over a synchronous repository: every method goes through the gate. */
export function asyncPort<T extends object>(
  sync: Sync<T>,
  gate: TransactionGate,
  iterables: readonly (keyof T & string)[] = [],
): T {
  const port: Record<string, unknown> = {};
  for (const name of methodNames(sync)) {
    const method = (sync as Record<string, (...args: unknown[]) => unknown>)[name].bind(sync);
    port[name] = (iterables as readonly string[]).includes(name)
      ? (...args: unknown[]) => gate.iterate(() => method(...args) as Iterable<unknown>)
      : (...args: unknown[]) => gate.call(() => method(...args));
  }
  return port as T;
}

function methodNames(obj: object): string[] {
  const names = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(obj);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  )
    for (const name of Object.getOwnPropertyNames(proto))
      if (name !== "constructor" && typeof (obj as Record<string, unknown>)[name] === "function")
        names.add(name);
  return [...names];
}
