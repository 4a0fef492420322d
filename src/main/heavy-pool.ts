import { Piscina } from "piscina";
import type { HeavyInput, HeavyOutput, HeavyRunner, HeavyTaskName } from "../app/heavy/tasks.js";
import { errorFromWire } from "../app/heavy/wire.js";
import { retryLater } from "../domain/errors.js";
import type { StoreDescription } from "../store/open.js";
import type { HeavyReply, HeavyTaskMessage } from "./heavy-worker.js";

/** Sizing and limits of the pool (docs/deployment.md, "Heavy requests"; env STREETFLOW_POOL_*). */
export interface HeavyPoolLimits {
  /** Worker threads. */
  threads: number;
  /** Heavy requests queued or running at once; the next is answered 503 `overloaded` at once. */
  maxDepth: number;
  /** Heavy requests of one API key queued or running at once; the next is answered 429 `key_busy`. */
  perKey: number;
  /** Longest a request waits in the queue for a thread before it is shed (503 `overloaded`). */
  maxWaitMs: number;
  /** Longest a request runs on its thread; then the thread is stopped (503 `time_limit_exceeded`). */
  timeLimitMs: number;
}

/** Built, the worker is heavy-worker.js; from TypeScript sources (tsx, tests) a shim registers tsx first. */
const FROM_SOURCES = import.meta.url.endsWith(".ts");
const WORKER = new URL(FROM_SOURCES ? "./heavy-worker.ts" : "./heavy-worker.js", import.meta.url);
const ENTRY = FROM_SOURCES ? new URL("./tsx-worker.mjs", import.meta.url) : WORKER;

/** Node 20 has Atomics.waitAsync; the ES2023 library the project compiles against does not declare it. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { value: unknown };
  }
).waitAsync;

/**
 * Heavy requests on worker threads (piscina) with admission control: a request is refused at once when the
 * pool is full or its key holds too large a share, is shed when no thread takes it within `maxWaitMs`, and
 * is stopped (its thread replaced) past `timeLimitMs`. So no request queues without bound, and the event
 * loop (and with it /healthz) stays free while polygons are searched and counts summed.
 */
export class HeavyPool implements HeavyRunner {
  private readonly pool: Piscina;
  private inFlight = 0;
  private started = 0;
  private readonly perCaller = new Map<string, number>();

  /** A pool whose threads have all started, opened the store and loaded the networks. */
  static async start(store: StoreDescription, limits: HeavyPoolLimits): Promise<HeavyPool> {
    const pool = new HeavyPool(store, limits);
    const arrived = new Int32Array(new SharedArrayBuffer(4));
    const warm: HeavyTaskMessage = { name: "warm", input: limits.threads, started: arrived };
    try {
      await Promise.all(Array.from({ length: limits.threads }, () => pool.pool.run(warm)));
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  private constructor(
    store: StoreDescription,
    readonly limits: HeavyPoolLimits,
  ) {
    this.pool = new Piscina({
      filename: ENTRY.href,
      minThreads: limits.threads,
      maxThreads: limits.threads,
      // The admission check below bounds the queue; piscina's own limit would only reject later.
      maxQueue: Infinity,
      // Threads keep their networks loaded between requests.
      idleTimeout: Infinity,
      workerData: { store, tsxTarget: WORKER.href },
    });
  }

  /** Heavy requests queued or running now. */
  get depth(): number {
    return this.inFlight;
  }

  /** Heavy requests running on a thread now. */
  get running(): number {
    return this.started;
  }

  saturated(): boolean {
    return this.inFlight >= this.limits.maxDepth;
  }

  async run<N extends HeavyTaskName>(
    name: N,
    input: HeavyInput<N>,
    caller?: string,
  ): Promise<HeavyOutput<N>> {
    this.admit(caller);
    this.inFlight++;
    if (caller) this.perCaller.set(caller, (this.perCaller.get(caller) ?? 0) + 1);
    try {
      return (await this.runAdmitted(name, input)) as HeavyOutput<N>;
    } finally {
      this.inFlight--;
      if (caller) {
        const left = (this.perCaller.get(caller) ?? 1) - 1;
        if (left > 0) this.perCaller.set(caller, left);
        else this.perCaller.delete(caller);
      }
    }
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }

  /** Refuses at once what would otherwise queue: the pool full (503), or this key's share used up (429). */
  private admit(caller: string | undefined): void {
    const { maxDepth, perKey, maxWaitMs } = this.limits;
    const seconds = Math.max(1, Math.ceil(maxWaitMs / 1000));
    if (this.inFlight >= maxDepth)
      throw retryLater("overloaded", { reason: `${maxDepth} heavy requests in progress`, seconds }, seconds);
    if (caller && (this.perCaller.get(caller) ?? 0) >= perKey)
      throw retryLater("key_busy", { max: perKey, seconds: 1 }, 1);
  }

  private async runAdmitted(name: HeavyTaskName, input: unknown): Promise<unknown> {
    const { maxWaitMs, timeLimitMs } = this.limits;
    const started = new Int32Array(new SharedArrayBuffer(4));
    const controller = new AbortController();
    let stopped: "waited" | "ran" | null = null;
    let settled = false;
    let timeTimer: NodeJS.Timeout | undefined;
    let running = false;
    const stop = (why: "waited" | "ran") => {
      stopped = why;
      controller.abort();
    };
    // The thread that takes the task sets and notifies `started`. Not taken within maxWaitMs: shed (aborting
    // a queued task only removes it from the queue). Taken: it may run timeLimitMs, then aborting terminates
    // its thread and piscina starts a fresh one.
    const waiting = waitAsync(started, 0, 0, maxWaitMs);
    void Promise.resolve(waiting.value).then(() => {
      if (settled) return;
      if (Atomics.load(started, 0) === 0) return stop("waited");
      running = true;
      this.started++;
      timeTimer = setTimeout(() => stop("ran"), timeLimitMs);
    });
    try {
      const message: HeavyTaskMessage = { name, input, started };
      const reply = (await this.pool.run(message, { signal: controller.signal })) as HeavyReply;
      if (!reply.ok) throw errorFromWire(reply.error);
      return reply.value;
    } catch (err) {
      if (stopped === "waited") {
        const seconds = Math.max(1, Math.ceil(maxWaitMs / 1000));
        throw retryLater(
          "overloaded",
          { reason: `no worker thread free within ${maxWaitMs} ms`, seconds },
          seconds,
        );
      }
      if (stopped === "ran") {
        const seconds = Math.max(1, Math.ceil(timeLimitMs / 1000));
        throw retryLater("time_limit_exceeded", { seconds }, seconds);
      }
      throw err;
    } finally {
      settled = true;
      if (running) this.started--;
      clearTimeout(timeTimer);
    }
  }
}
