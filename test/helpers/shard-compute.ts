import { existsSync, writeFileSync } from "node:fs";
import {
  computeAnalysis as realCompute,
  computeMergePart as realMergePart,
  computeShard as realShard,
  mergeShards as realMerge,
  type ComputeAnalysis,
  type ComputeMergePart,
  type ComputeShard,
  type MergeShards,
} from "../../src/app/analyses/compute.js";

/**
 * The real compute with its shard functions, plus two behaviours chosen by analysis name for the
 * shard tests: shards of `hang…` never finish (until cancelled); the first attempt of the second shard
 * of `flaky…` fails, once per marker file (STREETFLOW_TEST_FLAKY_MARKER, written when it fails).
 */
export const computeAnalysis: ComputeAnalysis = realCompute;
export const mergeShards: MergeShards = realMerge;
export const computeMergePart: ComputeMergePart = realMergePart;

export const computeShard: ComputeShard = async (spec, shard, ctx) => {
  if (spec.name.startsWith("hang")) await new Promise(() => setInterval(() => {}, 1000));
  const marker = `${process.env.STREETFLOW_TEST_FLAKY_MARKER}-${spec.uuid}`;
  if (spec.name.startsWith("flaky") && shard.fromId !== 0 && !existsSync(marker)) {
    writeFileSync(marker, String(shard.fromId));
    throw new Error("the database went away (injected)");
  }
  return await realShard(spec, shard, ctx);
};
