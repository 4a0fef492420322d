import { Worker } from "node:worker_threads";
import type { ThreadData, WarmInput, WorkerInput, WorkerMessage } from "./analysis-thread.js";

/** How a task ended: its result, partial sums or error (a thread that died ends its task with an error). */
export type TaskEnd = Extract<WorkerMessage, { type: "result" | "partial" | "error" }>;

/**
 * One runner's worker thread, started on the first task (or warmed ahead, see warm) and kept for the
 * next ones, so that the shards of an analysis pay the thread's start, the network's load and the
 * zones' compilation once (src/jobs/analysis-thread.ts). Terminating it (cancellation, shutdown) ends
 * the running task; the next task starts a new thread.
 */
export class WarmThread {
  private worker: Worker | null = null;
  /** The running task's handlers: at most one task at a time. */
  private task: { worker: Worker; onProgress(p: number): void; end(e: TaskEnd): void } | null = null;

  constructor(
    /** The thread's entry module (a file URL); .ts under tsx. */
    private readonly entry: string,
    private readonly data: ThreadData,
  ) {}

  /** Runs one task; onProgress sees the progress the task reports. */
  run(input: WorkerInput, onProgress: (progress: number) => void): Promise<TaskEnd> {
    if (this.task) throw new Error("the analysis thread is already running a task");
    const worker = (this.worker ??= this.start());
    return new Promise<TaskEnd>((resolve) => {
      this.task = {
        worker,
        onProgress,
        end: (e) => {
          this.task = null;
          resolve(e);
        },
      };
      worker.postMessage(input);
    });
  }

  /**
   * Starts the thread now and has it import the compute module and load the networks (WarmInput) while
   * nothing runs: a worker process's first shard then runs as fast as its later ones.
   */
  warm(computeModule: string): void {
    if (this.worker) return;
    this.worker = this.start();
    this.worker.postMessage({ warm: { computeModule } } satisfies WarmInput);
  }

  /** Stops the thread (and the task it runs, which ends with an error); the next run starts another. */
  async terminate(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  /**
   * A built .js entry starts as it is; under tsx the `--import tsx` flag does not reach worker threads
   * on Node 20, so a small script registers tsx's loader in the thread before importing a .ts entry.
   */
  private start(): Worker {
    const worker = this.entry.endsWith(".ts")
      ? new Worker(tsxBootstrap(this.entry), { eval: true, workerData: this.data })
      : new Worker(new URL(this.entry), { workerData: this.data });
    worker.on("message", (m: WorkerMessage) => {
      if (this.task?.worker !== worker) return;
      if (m.type === "progress") this.task.onProgress(m.progress);
      else this.task.end(m);
    });
    worker.on("error", (e) => this.ended(worker, `the computation failed: ${e.message}`));
    worker.on("exit", (code) =>
      this.ended(worker, `the computation stopped unexpectedly (exit code ${code})`),
    );
    return worker;
  }

  /** The thread is gone: its running task, if any, ends with the reason. */
  private ended(worker: Worker, message: string): void {
    if (this.worker === worker) this.worker = null;
    if (this.task?.worker === worker) this.task.end({ type: "error", message });
  }
}

function tsxBootstrap(entry: string): string {
  const tsxApi = import.meta.resolve("tsx/esm/api");
  return `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
}
