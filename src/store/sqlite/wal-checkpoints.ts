import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * WAL bytes after which the writing connection checkpoints inside a COMMIT itself (SQLite's auto-checkpoint):
 * the bound on the WAL should the background checkpoints fall behind. SQLite's default of 1,000 pages made
 * every ingest batch's COMMIT copy its frames. It must hold a few whole batches: an ingest batch of 20,000
 * trips on Monaco rewrites its month's tallies, ~30 MB of pages, and at the former 32 MB the second batch of
 * a month's ingest still checkpointed in its COMMIT (110-170 ms of the ingest's serial tail).
 */
export const WAL_BOUND_BYTES = 128 * 1024 * 1024;

/** The bound in pages of the database's size (`wal_autocheckpoint` counts pages). */
export const walPagesBound = (pageSize: number) => Math.ceil(WAL_BOUND_BYTES / pageSize);

/** What a checkpoint reported: PRAGMA wal_checkpoint's row (busy 1 when it could not finish). */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The worker's whole program, plain JavaScript so it runs the same from the TypeScript sources and from
 * `dist`: its own connection to the file, a checkpoint per message.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
parentPort.on("message", (mode) => {
  if (mode === "close") {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [row] = db.pragma("wal_checkpoint(" + mode + ")");
    parentPort.postMessage({ row });
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e) });
  }
});
`;

/**
 * Copies committed WAL frames into the database file on a second connection in a worker thread, off the
 * writer's path: a checkpoint only copies frames that are already durable in the WAL, so moving it changes
 * no guarantee, but inside a large transaction's COMMIT it made the writer (an ingest's last batch) wait.
 * Requests made while one runs come to one more checkpoint. PASSIVE checkpoints never block the writer or
 * readers; the WAL restarts from its beginning at the next write after one that copied every frame.
 */
export class WalCheckpoints {
  private worker: Worker | null = null;
  private running: Promise<CheckpointResult | null> | null = null;
  private wanted = false;
  private failed = false;
  private closed = false;

  /** `onFailure` gets the reason when the thread cannot checkpoint (the writer should then do it itself). */
  constructor(
    private readonly file: string,
    private readonly onFailure: (reason: string) => void,
  ) {}

  /** A checkpoint once the current turn of the event loop is done (so its caller's statements go first). */
  request(): void {
    if (this.closed || this.failed) return;
    this.wanted = true;
    if (!this.running)
      this.running = new Promise((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /** Waits until no checkpoint is wanted or running; answers the last one's report (null when none ran). */
  async settled(): Promise<CheckpointResult | null> {
    let last: CheckpointResult | null = null;
    while (this.running) last = await this.running;
    return last;
  }

  /** Lets a running checkpoint finish, then ends the thread and its connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.wanted = false;
    await this.settled();
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.ref();
    worker.postMessage("close");
    await exited;
  }

  private async drain(): Promise<CheckpointResult | null> {
    let last: CheckpointResult | null = null;
    try {
      while (this.wanted && !this.failed) {
        this.wanted = false;
        last = await this.checkpoint("PASSIVE");
      }
    } catch (e) {
      this.fail((e as Error).message);
    } finally {
      this.running = null;
    }
    return last;
  }

  private checkpoint(mode: "PASSIVE"): Promise<CheckpointResult> {
    const worker = this.thread();
    // Held while a checkpoint runs, so awaiting it keeps the process alive; idle, the thread does not.
    worker.ref();
    return new Promise((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the checkpoint thread stopped (exit code ${code})`));
      worker.once("exit", onExit);
      worker.once("message", (m: { row?: CheckpointResult; error?: string }) => {
        worker.off("exit", onExit);
        worker.unref();
        if (m.row) resolve(m.row);
        else reject(new Error(m.error ?? "the checkpoint failed"));
      });
      worker.postMessage(mode);
    });
  }

  /** Started at the first checkpoint, not at open: most stores tests open never write much. */
  private thread(): Worker {
    if (this.worker) return this.worker;
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: this.file, driver } });
    // A store left open must not keep its process alive; close() ends the thread in order.
    worker.unref();
    worker.on("error", (e) => this.fail(e.message));
    this.worker = worker;
    return worker;
  }

  private fail(reason: string): void {
    if (this.failed) return;
    this.failed = true;
    void this.worker?.terminate();
    this.worker = null;
    this.onFailure(reason);
  }
}
