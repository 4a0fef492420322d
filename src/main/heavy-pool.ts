import { OrderedPool } from "../engine/ordered-pool.js";
import type {
  HeavyAdmission,
  HeavyInput,
  HeavyOutput,
  HeavyRunner,
  HeavyTaskName,
  Refusal,
} from "../app/heavy/tasks.js";
import { abandonTask, errorFromWire, PAST_DEADLINE } from "../app/heavy/wire.js";
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
  /** Longest a request waits in the queue for a thread before it is shed (503 `overloaded`), deadline or not. */
  maxWaitMs: number;
  /**
   * Longest a request runs on its thread; then the thread is stopped (503 `time_limit_exceeded`). A request
   * that had to queue is answered at its deadline already (see HeavyPool), its thread stopped only here.
   */
  timeLimitMs: number;
}

/** Built, the worker is heavy-worker.js; from TypeScript sources (tsx, tests) a shim registers tsx first. */
const FROM_SOURCES = import.meta.url.endsWith(".ts");
const WORKER = new URL(FROM_SOURCES ? "./heavy-worker.ts" : "./heavy-worker.js", import.meta.url);
const ENTRY = FROM_SOURCES ? new URL("../engine/tsx-worker.mjs", import.meta.url) : WORKER;

/** Node 20 has Atomics.waitAsync; the ES2023 library the project compiles against does not declare it. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { value: unknown };
  }
).waitAsync;

/** Weight of the latest run in the running mean of a task kind's run time. */
const SMOOTHING = 0.2;

/** How long one task of each kind runs on a thread (ms), as a running mean: what admission expects. */
class RunTimes {
  private readonly mean = new Map<HeavyTaskName, number>();

  /** An unmeasured kind counts 0 ms: the first ones are admitted, and shed at their deadline if need be. */
  expected(name: HeavyTaskName): number {
    return this.mean.get(name) ?? 0;
  }

  record(name: HeavyTaskName, ms: number): void {
    const mean = this.mean.get(name);
    this.mean.set(name, mean === undefined ? ms : mean + SMOOTHING * (ms - mean));
  }
}

/** One admitted task: what it is expected to take, and since when it runs (0 while queued). */
interface Ticket {
  name: HeavyTaskName;
  expectedMs: number;
  startedAt: number;
}

const secondsOf = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

const refusalOf = (reason: string, waitMs: number): Refusal => ({ reason, seconds: secondsOf(waitMs) });

const overloaded = (reason: string, waitMs: number) => {
  const refusal = refusalOf(reason, waitMs);
  return retryLater("overloaded", refusal, refusal.seconds);
};

/**
 * Heavy requests on worker threads (piscina) with admission control, so no request queues without bound
 * and the event loop (and with it /healthz) stays free while polygons are searched and counts summed.
 * A request is refused at once when the pool is full, when its key holds too large a share, or when the
 * work queued ahead of it plus its own expected run time (a running mean per task kind) would pass its
 * deadline. Queued requests take the threads in the order they arrived (`OrderedPool`). Queued, a request is
 * shed when no thread has taken it by its deadline less its expected run time
 * (or `maxWaitMs`). Once running, a request that had to queue is answered 503 at its deadline and not
 * waited for: its thread finishes (or is stopped at `timeLimitMs`) and stays counted until then. A request
 * a free thread took at once is not under overload: only the time limit bounds it.
 */
export class HeavyPool implements HeavyRunner {
  private readonly pool: OrderedPool;
  private inFlight = 0;
  /** Heavy-route requests admitted and not yet answered (arrive), whether or not they reached `run` yet. */
  private arriving = 0;
  private readonly perCaller = new Map<string, number>();
  private readonly runTimes = new RunTimes();
  private readonly queued = new Set<Ticket>();
  private readonly active = new Set<Ticket>();

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
    this.pool = new OrderedPool({
      filename: ENTRY.href,
      minThreads: limits.threads,
      maxThreads: limits.threads,
      // Threads keep their networks loaded between requests.
      idleTimeout: Infinity,
      workerData: { store, tsxTarget: WORKER.href },
    });
  }

  /** Heavy requests queued or running now (one answered at its deadline counts until its thread is done). */
  get depth(): number {
    return this.inFlight;
  }

  /** Heavy requests running on a thread now. */
  get running(): number {
    return this.active.size;
  }

  /** How long a request admitted now would wait for a thread: the work queued and still running, per thread. */
  expectedWaitMs(now = performance.now()): number {
    let work = 0;
    for (const t of this.queued) work += t.expectedMs;
    for (const t of this.active) work += Math.max(0, t.startedAt + t.expectedMs - now);
    return work / this.limits.threads;
  }

  refusal(name: HeavyTaskName, deadline = Infinity): Refusal | null {
    // Those still on their way count too: with a networked store, requests admitted here wait for their
    // key and quota look-ups while the event loop is free, and nothing else would bound that queue.
    return this.refusalAt(name, deadline, Math.max(this.inFlight, this.arriving));
  }

  /** Refused at `depth` requests ahead (at `run`, the request has arrived already: only those at the pool). */
  private refusalAt(name: HeavyTaskName, deadline: number, depth: number): Refusal | null {
    const now = performance.now();
    const wait = this.expectedWaitMs(now);
    if (depth >= this.limits.maxDepth)
      return refusalOf(`${this.limits.maxDepth} heavy requests in progress`, wait);
    // Waited past its deadline already (in the event loop, for the store): too late whatever comes next.
    if (now >= deadline) return refusalOf("it waited past its deadline before it reached the pool", wait);
    // A free thread takes it at once: however long it runs, that is its size, not overload.
    if (this.threadFree()) return null;
    if (now + wait + this.runTimes.expected(name) > deadline)
      return refusalOf(`the heavy work queued would not let it finish in time`, wait);
    return null;
  }

  async run<N extends HeavyTaskName>(
    name: N,
    input: HeavyInput<N>,
    { caller, deadline = Infinity }: HeavyAdmission = {},
  ): Promise<HeavyOutput<N>> {
    const refused = this.refusalAt(name, deadline, this.inFlight);
    if (refused) throw retryLater("overloaded", refused, refused.seconds);
    const { perKey } = this.limits;
    if (caller && (this.perCaller.get(caller) ?? 0) >= perKey)
      throw retryLater("key_busy", { max: perKey, seconds: 1 }, 1);
    this.hold(caller);
    const { answer, done } = this.submit(name, input, deadline);
    // Counted until the thread is free, even when the answer was given up at the deadline.
    void done.then(
      () => this.release(caller),
      () => this.release(caller),
    );
    return (await answer) as HeavyOutput<N>;
  }

  arrive(): () => void {
    this.arriving++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.arriving--;
    };
  }

  /** Heavy-route requests admitted and not yet answered. */
  get arrived(): number {
    return this.arriving;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }

  /** Fewer tasks running or queued than threads (a task answered at its deadline still holds its thread). */
  private threadFree(): boolean {
    return this.active.size + this.queued.size < this.limits.threads;
  }

  private hold(caller: string | undefined): void {
    this.inFlight++;
    if (caller) this.perCaller.set(caller, (this.perCaller.get(caller) ?? 0) + 1);
  }

  private release(caller: string | undefined): void {
    this.inFlight--;
    if (!caller) return;
    const left = (this.perCaller.get(caller) ?? 1) - 1;
    if (left > 0) this.perCaller.set(caller, left);
    else this.perCaller.delete(caller);
  }

  /**
   * Queues the task. `done` settles when its thread is done with it (or it left the queue); `answer`
   * settles with it, or earlier, at the deadline, for a task that had to queue.
   */
  private submit(
    name: HeavyTaskName,
    input: unknown,
    deadline: number,
  ): { answer: Promise<unknown>; done: Promise<unknown> } {
    const { maxWaitMs, timeLimitMs } = this.limits;
    const ticket: Ticket = { name, expectedMs: this.runTimes.expected(name), startedAt: 0 };
    const takenAtOnce = this.threadFree();
    this.queued.add(ticket);
    const started = new Int32Array(new SharedArrayBuffer(4));
    const controller = new AbortController();
    let stopped: "waited" | "ran" | null = null;
    let settled = false;
    let timeTimer: NodeJS.Timeout | undefined;
    let deadlineTimer: NodeJS.Timeout | undefined;
    let giveUp: (err: Error) => void = () => {};
    const gaveUp = new Promise<never>((_, reject) => (giveUp = reject));
    const stop = (why: "waited" | "ran") => {
      stopped = why;
      controller.abort();
    };
    // The thread that takes the task sets and notifies `started`. Not taken in time: shed (aborting a
    // queued task only removes it from the queue). Taken: it may run timeLimitMs, then aborting terminates
    // its thread and piscina starts a fresh one.
    const waitLimit = takenAtOnce
      ? maxWaitMs
      : Math.max(0, Math.min(maxWaitMs, deadline - ticket.expectedMs - performance.now()));
    const waiting = waitAsync(started, 0, 0, waitLimit);
    void Promise.resolve(waiting.value).then(() => {
      if (settled) return;
      if (Atomics.load(started, 0) === 0) return stop("waited");
      this.queued.delete(ticket);
      ticket.startedAt = performance.now();
      this.active.add(ticket);
      timeTimer = setTimeout(() => stop("ran"), timeLimitMs);
      if (!takenAtOnce && Number.isFinite(deadline))
        deadlineTimer = setTimeout(
          () => {
            // A thread that claimed the answer is committing its writes: that answer is waited for.
            if (abandonTask(started)) giveUp(overloaded(PAST_DEADLINE, this.expectedWaitMs()));
          },
          Math.max(0, deadline - ticket.startedAt),
        );
    });
    const message: HeavyTaskMessage = { name, input, started };
    const done = this.pool
      .run<HeavyReply>(message, { signal: controller.signal })
      .then((reply: HeavyReply) => {
        if (ticket.startedAt > 0) this.runTimes.record(name, performance.now() - ticket.startedAt);
        if (!reply.ok) throw errorFromWire(reply.error);
        return reply.value;
      })
      .catch((err: unknown) => {
        if (stopped === "waited")
          throw overloaded(`no worker thread free within ${Math.round(waitLimit)} ms`, waitLimit);
        if (stopped === "ran")
          throw retryLater(
            "time_limit_exceeded",
            { seconds: secondsOf(timeLimitMs) },
            secondsOf(timeLimitMs),
          );
        throw err;
      })
      .finally(() => {
        settled = true;
        this.queued.delete(ticket);
        this.active.delete(ticket);
        clearTimeout(timeTimer);
        clearTimeout(deadlineTimer);
      });
    return { answer: Promise.race([done, gaveUp]), done };
  }
}
