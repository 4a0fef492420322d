import type { AnalysisSpec } from "../domain/analyses/spec.js";
import type { ComputeAnalysis } from "../app/analyses/compute.js";
import type { AppContext } from "../app/context.js";
import type { StoreDescription } from "../app/ports/store.js";

/** What the runner hands a worker thread. */
export interface WorkerInput {
  /** The store to read, opened in the thread (SQLite read-only, or PostgreSQL). */
  store: StoreDescription;
  spec: AnalysisSpec;
  /** URL of a module exporting `computeAnalysis: ComputeAnalysis`. */
  computeModule: string;
}

/** Messages a worker posts to the runner. */
export type WorkerMessage =
  | { type: "progress"; progress: number }
  | { type: "result"; results: Record<string, string> }
  | { type: "error"; message: string };

/**
 * Runs one analysis in a worker thread over the thread's own read-only context (opened by the composition
 * root's thread entry, src/main/analysis-worker.ts); results go back by message, never to the store.
 */
export async function runAnalysisInThread(
  ctx: AppContext,
  input: WorkerInput,
  post: (m: WorkerMessage) => void,
): Promise<void> {
  try {
    const { computeAnalysis } = (await import(input.computeModule)) as { computeAnalysis: ComputeAnalysis };
    const onProgress = (progress: number) => post({ type: "progress", progress });
    const results = await computeAnalysis(input.spec, { ...ctx, onProgress });
    const notCsv = Object.entries(results ?? {}).find(([, csv]) => typeof csv !== "string");
    if (!results || notCsv)
      throw new Error(`the computation returned no CSV text for ${notCsv?.[0] ?? "its metrics"}`);
    post({ type: "result", results });
  } catch (e) {
    post({ type: "error", message: e instanceof Error ? e.message : String(e) });
  }
}
