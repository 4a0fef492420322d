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
  /** Longest a request spends in the pool, waiting included; then its thread is stopped (503 `time_limit_exceeded`). */
  timeLimitMs: number;
}

/** Running from TypeScript sources (tsx, tests) the worker is the .ts file; built, the .js one. */
const WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./heavy-worker.ts" : "./heavy-worker.js",
  import.meta.url,
);

/**
 * Heavy requests on worker threads (piscina) with admission control: a request is refused at once when the
 * pool is full or its key holds too large a share, is shed when no thread takes it within `maxWaitMs`, and
 * is stopped (its thread replaced) past `timeLimitMs`. So no request queues without bound, and the event
 * loop (and with it /healthz) stays free while polygons are searched and counts summed.
 */
export class HeavyPool implements HeavyRunner {
  private readonly pool: Piscina;
  private inFlight = 0;
  private readonly perCaller = new Map<string, number>();

  constructor(
    store: StoreDescription,
    readonly limits: HeavyPoolLimits,
  ) {
    this.pool = new Piscina({
      filename: WORKER.href,
      minThreads: limits.threads,
      maxThreads: limits.threads,
      // The admission check below bounds the queue; piscina's own limit would only reject later.
      maxQueue: Infinity,
      // Threads keep their networks loaded between requests.
      idleTimeout: Infinity,
      workerData: { store },
    });
  }

  /** Heavy requests queued or running now. */
  get depth(): number {
    return this.inFlight;
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
    const stop = (why: "waited" | "ran") => {
      stopped = why;
      controller.abort();
    };
    // Still queued after maxWaitMs: shed (aborting a queued task only removes it from the queue).
    const waitTimer = setTimeout(() => Atomics.load(started, 0) === 0 && stop("waited"), maxWaitMs);
    // Running too long: aborting terminates its thread, and piscina starts a fresh one.
    const timeTimer = setTimeout(() => stop("ran"), timeLimitMs);
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
      clearTimeout(waitTimer);
      clearTimeout(timeTimer);
    }
  }
}
