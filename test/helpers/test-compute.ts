import { computeAnalysis as realCompute, type ComputeAnalysis } from "../../src/app/analyses/compute.js";

/**
 * The real compute, plus two behaviours chosen by analysis name so HTTP tests
 * can drive the lifecycle: `hang…` reports half progress and never finishes
 * (until cancelled), `fail…` throws an actionable error.
 */
export const computeAnalysis: ComputeAnalysis = async (spec, ctx) => {
  if (spec.name.startsWith("hang")) {
    ctx.onProgress(0.5);
    await new Promise(() => setInterval(() => {}, 1000)); // keeps the worker alive until terminated
  }
  if (spec.name.startsWith("fail")) throw new Error("zone set Downtown has no zone on the road network");
  return realCompute(spec, ctx);
};
