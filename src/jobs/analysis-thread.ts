import type { AnalysisSpec } from "../domain/analyses/spec.js";
import type { ComputeAnalysis, ComputeShard, MergeShards } from "../app/analyses/compute.js";
import type { AnalysisShard } from "../app/analyses/shards.js";
import type { AppContext } from "../app/context.js";
import type { StoreDescription } from "../app/ports/store.js";

/** What a worker computes: the whole analysis, one shard's partial sums, or the merge of every shard's. */
export type WorkerTask =
  { type: "whole" } | { type: "shard"; shard: AnalysisShard } | { type: "merge"; partials: Uint8Array[] };

/** What the runner hands a worker thread. */
export interface WorkerInput {
  /** The store to read, opened in the thread (SQLite read-only, or PostgreSQL). */
  store: StoreDescription;
  spec: AnalysisSpec;
  /** URL of a module exporting `computeAnalysis: ComputeAnalysis` (and computeShard, mergeShards to shard). */
  computeModule: string;
  task?: WorkerTask;
}

/** Messages a worker posts to the runner. */
export type WorkerMessage =
  | { type: "progress"; progress: number }
  | { type: "result"; results: Record<string, string> }
  | { type: "partial"; partial: Uint8Array }
  | { type: "error"; message: string };

/**
 * Runs one analysis task in a worker thread over the thread's own read-only context (opened by the
 * composition root's thread entry, src/main/analysis-worker.ts); results go back by message, never to the
 * store.
 */
export async function runAnalysisInThread(
  ctx: AppContext,
  input: WorkerInput,
  post: (m: WorkerMessage) => void,
): Promise<void> {
  try {
    const compute = (await import(input.computeModule)) as {
      computeAnalysis: ComputeAnalysis;
      computeShard: ComputeShard;
      mergeShards: MergeShards;
    };
    const computeCtx = { ...ctx, onProgress: (progress: number) => post({ type: "progress", progress }) };
    const task = input.task ?? { type: "whole" };
    if (task.type === "shard") {
      // Progress of a shard is its parent's business (shards done of all).
      const partial = await compute.computeShard(input.spec, task.shard, { ...ctx, onProgress: () => {} });
      post({ type: "partial", partial });
      return;
    }
    const results =
      task.type === "merge"
        ? await compute.mergeShards(input.spec, task.partials, computeCtx)
        : await compute.computeAnalysis(input.spec, computeCtx);
    const notCsv = Object.entries(results ?? {}).find(([, csv]) => typeof csv !== "string");
    if (!results || notCsv)
      throw new Error(`the computation returned no CSV text for ${notCsv?.[0] ?? "its metrics"}`);
    post({ type: "result", results });
  } catch (e) {
    post({ type: "error", message: e instanceof Error ? e.message : String(e) });
  }
}
