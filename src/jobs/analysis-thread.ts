import type { AnalysisSpec } from "../domain/analyses/spec.js";
import type {
  ComputeAnalysis,
  ComputeMergePart,
  ComputeShard,
  MergeShards,
} from "../app/analyses/compute.js";
import type { AnalysisShard, PartsStored, ShardPieces } from "../app/analyses/shards.js";
import type { AppContext } from "../app/context.js";
import type { StoreDescription } from "../app/ports/store.js";
import { AnalysisMemo } from "../app/analyses/memo.js";

/**
 * What a worker computes: the whole analysis, one shard's partial sums, one part of a split merge
 * (the od_* rows of its runs of zone pairs), or the merge of every shard's partials (and of the parts' rows).
 */
export type WorkerTask =
  | { type: "whole" }
  | { type: "shard"; shard: AnalysisShard }
  | { type: "merge-part"; partials: ShardPieces[]; part: number; parts: number }
  /** parts: the merge parts' results, or "stored" when they stored their rows as result pieces. */
  | { type: "merge"; partials: ShardPieces[]; parts?: Uint8Array[] | PartsStored };

/** What the runner hands its worker thread when starting it: the store the thread opens, once. */
export interface ThreadData {
  /** The store to read, opened in the thread (SQLite read-only, or PostgreSQL). */
  store: StoreDescription;
}

/** One task the runner hands its (warm) worker thread. */
export interface WorkerInput {
  spec: AnalysisSpec;
  /** URL of a module exporting `computeAnalysis: ComputeAnalysis` (and computeShard, mergeShards to shard). */
  computeModule: string;
  task: WorkerTask;
}

/**
 * Sent once before any task by a runner that warms its thread when it starts (a worker process): the
 * thread imports the compute module and loads every imported network, so that its first shard does not
 * pay for them beside other workers' shards. It answers nothing; a task posted meanwhile waits for it.
 */
export interface WarmInput {
  warm: { computeModule: string };
}

/** Messages a worker posts to the runner; every task ends with one result, partial or error. */
export type WorkerMessage =
  | { type: "progress"; progress: number }
  | { type: "result"; results: Record<string, string> }
  /** A child job's result, in pieces (a shard's: SHARD_PIECES; a merge part's: one). */
  | { type: "partial"; partial: Uint8Array[] }
  | { type: "error"; message: string };

/**
 * A worker thread's state across its tasks: its read-only context (opened by the composition root's
 * thread entry, src/main/analysis-worker.ts), with the networks it loaded, and what the analyses' tasks
 * keep between them (compiled zones). A thread stays warm for the next shard of an analysis instead of
 * starting, loading the network and compiling the zones again.
 */
export class AnalysisThreadState {
  readonly memo = new AnalysisMemo();

  constructor(readonly ctx: AppContext) {}
}

/**
 * Runs one analysis task in the worker thread; results go back by message, never to the store. The
 * last task of an analysis in this thread (whole, or the merge) drops what the thread kept for it.
 */
export async function runAnalysisInThread(
  thread: AnalysisThreadState,
  input: WorkerInput,
  post: (m: WorkerMessage, transfer?: ArrayBuffer[]) => void,
): Promise<void> {
  const { spec, task } = input;
  try {
    const compute = (await import(input.computeModule)) as {
      computeAnalysis: ComputeAnalysis;
      computeShard: ComputeShard;
      computeMergePart: ComputeMergePart;
      mergeShards: MergeShards;
    };
    const ctx = { ...thread.ctx, memo: thread.memo };
    if (task.type === "shard" || task.type === "merge-part") {
      // Progress of a child job is its parent's business (children done of all).
      const quiet = { ...ctx, onProgress: () => {} };
      const partial =
        task.type === "shard"
          ? await compute.computeShard(spec, task.shard, quiet)
          : [await compute.computeMergePart(spec, task.partials, task.part, task.parts, quiet)];
      post({ type: "partial", partial }, partial.flatMap(ownBuffer));
      return;
    }
    const computeCtx = { ...ctx, onProgress: (progress: number) => post({ type: "progress", progress }) };
    const results =
      task.type === "merge"
        ? await compute.mergeShards(spec, task.partials, computeCtx, task.parts)
        : await compute.computeAnalysis(spec, computeCtx);
    const notCsv = Object.entries(results ?? {}).find(([, csv]) => typeof csv !== "string");
    if (!results || notCsv)
      throw new Error(`the computation returned no CSV text for ${notCsv?.[0] ?? "its metrics"}`);
    post({ type: "result", results });
  } catch (e) {
    post({ type: "error", message: e instanceof Error ? e.message : String(e) });
  } finally {
    if (task.type === "whole" || task.type === "merge") thread.memo.forget(spec.uuid);
  }
}

/**
 * Warms the thread (WarmInput): the compute module imported (and so compiled as far as V8 compiles
 * ahead) and each country's network loaded. Failures are left to the first task, which meets them again
 * and reports them.
 */
export async function warmAnalysisThread(thread: AnalysisThreadState, input: WarmInput): Promise<void> {
  try {
    await import(input.warm.computeModule);
    for (const { country } of await thread.ctx.store.network.countries())
      await thread.ctx.networks.get(country);
  } catch {
    // The first task reports what went wrong.
  }
}

/** The bytes' buffer when they fill it alone, to hand over without a copy (else none: copied). */
function ownBuffer(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes;
  return buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength
    ? [buffer]
    : [];
}
