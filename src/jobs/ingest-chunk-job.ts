import type { AppContext } from "../app/context.js";
import {
  ChunkMatchers,
  storeIngestChunk,
  type ChunkOutcome,
  type IngestChunkPayload,
} from "../app/ingest-chunk.js";
import type { Job, JobQueue } from "../app/ports/job-queue.js";

/** What a runner lends a chunk job: its queue, lease and log, and whether it is shutting down. */
export interface ChunkJobRunner {
  queue: JobQueue;
  workerId: string;
  leaseMs: number;
  heartbeatMs: number;
  maxAttempts: number;
  log: (line: string) => void;
  stopping: () => boolean;
  /** Shutting down mid-run: gives the job back to the queue (and says whether it could). */
  handBack: (job: Job, name: string) => Promise<void>;
}

/**
 * Runs ingest chunk jobs in a worker process: matching on the process's MatchPool threads (the event
 * loop stays free for the lease's heartbeats), storing on the main thread's store.
 */
export class IngestChunkJobs {
  private readonly matchers: ChunkMatchers;

  constructor(
    private readonly ctx: AppContext,
    threads: number,
  ) {
    this.matchers = new ChunkMatchers(ctx, threads);
  }

  async run(job: Job, runner: ChunkJobRunner): Promise<void> {
    const { queue, workerId } = runner;
    const chunk = job.payload as IngestChunkPayload;
    const name = `ingest chunk ${chunk.seq + 1} (${chunk.ingestId})`;
    if (job.attempts > runner.maxAttempts) {
      await this.failForGood(job, runner, name, `interrupted ${job.attempts - 1} times while running`);
      return;
    }
    runner.log(`${name} started, attempt ${job.attempts}`);
    let held = true;
    const heartbeat = setInterval(() => {
      queue.heartbeat(job.id, workerId, runner.leaseMs).then(
        (ok) => (held &&= ok),
        (e: unknown) => runner.log(`job ${job.id}: heartbeat failed: ${(e as Error).message}`),
      );
    }, runner.heartbeatMs);
    let outcome: ChunkOutcome;
    try {
      const match = await this.matchers.for(chunk.country);
      outcome = await storeIngestChunk(this.ctx, chunk, match, () => held && !runner.stopping());
    } catch (e) {
      await this.failed(job, runner, name, (e as Error).message);
      return;
    } finally {
      clearInterval(heartbeat);
    }
    if (outcome.type === "abandoned") {
      // Stopping: hand it back at once; a lost lease: another runner has it (or it was cancelled).
      if (runner.stopping()) await runner.handBack(job, name);
      return;
    }
    await queue.complete(job.id, workerId);
    runner.log(
      outcome.type === "stored"
        ? `${name} done: ${outcome.result.stored} trips stored, ${outcome.result.duplicates} already stored`
        : `${name} was done already`,
    );
  }

  /** A failed attempt is retried where the queue can (up to maxAttempts), else the chunk fails for good. */
  private async failed(job: Job, runner: ChunkJobRunner, name: string, message: string): Promise<void> {
    const { flows } = runner.queue;
    if (flows && job.attempts < runner.maxAttempts && (await flows.retry(job.id, runner.workerId))) {
      runner.log(`${name} failed (${message}); retrying`);
      return;
    }
    await this.failForGood(job, runner, name, message);
  }

  private async failForGood(job: Job, runner: ChunkJobRunner, name: string, reason: string): Promise<void> {
    await this.ctx.store.ingestChunks.markFailed(
      (job.payload as IngestChunkPayload).ingestId,
      (job.payload as IngestChunkPayload).seq,
      reason,
    );
    await runner.queue.fail(job.id, runner.workerId, reason);
    runner.log(`${name} failed: ${reason}`);
  }

  close(): Promise<void> {
    return this.matchers.close();
  }
}
