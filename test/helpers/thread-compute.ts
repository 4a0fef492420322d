import { threadId } from "node:worker_threads";
import type { ComputeAnalysis } from "../../src/app/analyses/compute.js";

/**
 * A compute module that answers which worker thread ran it (metric `thread`), so tests can tell a warm
 * thread from a new one; analyses named `hang…` report half progress and never finish (until cancelled).
 */
export const computeAnalysis: ComputeAnalysis = async (spec, ctx) => {
  if (spec.name.startsWith("hang")) {
    ctx.onProgress(0.5);
    await new Promise(() => setInterval(() => {}, 1000));
  }
  return { thread: String(threadId) };
};
