import { Piscina } from "piscina";

type PoolOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;

type OrderedPoolOptions = PoolOptions & {
  maxThreads: number;
  /**
   * Tasks handed to each thread at once (default 1). With 2, a thread that finishes one starts the next
   * already in its port instead of waiting for this thread to take the answer and hand it another; each
   * thread still runs its own in the order handed, so tasks start in order but for the threads' overlap.
   */
  tasksPerThread?: number;
  /**
   * The most tasks `handAhead` gives each thread (default `tasksPerThread`): piscina takes that many per
   * thread, though it is handed no more than `tasksPerThread` each otherwise.
   */
  tasksAheadPerThread?: number;
};

/** What a task may carry besides itself: an abort signal (a task aborted while waiting leaves the line). */
export interface OrderedRunOptions {
  signal?: AbortSignal;
  transferList?: NonNullable<Parameters<Piscina["run"]>[1]>["transferList"];
}

/**
 * A piscina pool whose tasks start in the order they were asked: it hands piscina only as many tasks as its
 * threads take at once and keeps the line itself. Piscina's own queue does not keep that order. Each time a
 * worker frees up it starts the first task, takes the next one too and, finding no worker for it, puts it back
 * at the queue's end: on one thread, five tasks asked at once start 1, 3, 5, 4, 2; its `stricterFIFO` option
 * fixes that for plain tasks, but starts tasks with an abort signal (which it queues apart) latest first,
 * 3, 2, 1. The ingest takes matched groups in reading order, so it waited for a group sent early and started
 * late while the later groups' outcomes piled up, to be kept and tallied at the end with the workers idle; a
 * demo simulation or a heavy request was overtaken the same way (docs/performance.md, "Stop 45").
 */
export class OrderedPool {
  private readonly pool: Piscina;
  /** Tasks piscina may hold at once: `tasksPerThread` per thread, so that it never queues one itself. */
  private readonly slots: number;
  /** Tasks piscina may hold once handed ahead: `tasksAheadPerThread` per thread, which it takes without queueing. */
  private readonly slotsAhead: number;
  /** Tasks handed to piscina and not settled. */
  private handed = 0;
  /** Tasks waiting for a thread, first come first served. */
  private readonly line: Waiting[] = [];
  private destroyed = false;

  constructor({ tasksPerThread = 1, tasksAheadPerThread = tasksPerThread, ...options }: OrderedPoolOptions) {
    const most = Math.max(tasksPerThread, tasksAheadPerThread);
    this.pool = new Piscina({ ...options, concurrentTasksPerWorker: most });
    this.slots = options.maxThreads * tasksPerThread;
    this.slotsAhead = options.maxThreads * most;
  }

  /** Runs `task` on a thread once the tasks asked before it have theirs. */
  run<T>(task: unknown, options: OrderedRunOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.destroyed) return reject(notStarted());
      const start = () => {
        this.handed++;
        // A throw inside `run` rejects like a failed run, and frees the turn alike.
        new Promise<T>((ran) => ran(this.pool.run(task, options))).then(resolve, reject).finally(() => {
          this.handed--;
          this.startWaiting(this.slots);
        });
      };
      if (this.handed < this.slots) return start();
      const waiting = { start, refuse: reject };
      this.line.push(waiting);
      options.signal?.addEventListener(
        "abort",
        () => {
          const at = this.line.indexOf(waiting);
          if (at < 0) return;
          this.line.splice(at, 1);
          reject(options.signal!.reason);
        },
        { once: true },
      );
    });
  }

  /**
   * Hands the threads the tasks waiting in the line, up to `tasksAheadPerThread` each (piscina gives each
   * task to the thread holding fewest), for when this thread is about to block: they then work through
   * them meanwhile, where each would stop after its `tasksPerThread`, waiting for this thread to hand it
   * the next. Tasks asked later wait until fewer than `tasksPerThread` per thread are out again: kept long,
   * the queues would leave one thread idle at the end while another still works through its own.
   */
  handAhead(): void {
    this.startWaiting(this.slotsAhead);
  }

  /** Starts tasks from the line, first come first served, while fewer than `limit` are handed out. */
  private startWaiting(limit: number): void {
    while (this.handed < limit && this.line.length > 0) this.line.shift()!.start();
  }

  /** Stops the threads: the tasks they run fail as piscina fails them, those still in the line without starting. */
  destroy(): Promise<void> {
    this.destroyed = true;
    for (const waiting of this.line.splice(0)) waiting.refuse(notStarted());
    return this.pool.destroy();
  }
}

interface Waiting {
  start: () => void;
  refuse: (reason: Error) => void;
}

const notStarted = () => new Error("the worker pool was closed before the task started");
