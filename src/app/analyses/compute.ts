import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import type { Store } from "../ports/store.js";
import type { AppContext } from "../context.js";
import { toCsv } from "../../engine/analysis/csv.js";
import { samplePeriods } from "./od-review.js";
import { computeOdMetrics } from "./od-metrics.js";
import { computeZoneActivityMetrics } from "./zone-activity-metrics.js";
import { computeOdMfMetrics } from "./od-mf-metrics.js";
import { computeSegmentMetrics } from "./segment-metrics.js";
import { computeAadtMetrics } from "./aadt-metrics.js";
import { computeNetworkOdMetrics } from "./network-od-metrics.js";
import { computeNetworkPerformanceMetrics } from "./network-performance-metrics.js";
import { computeTopRoutesMetrics } from "./top-routes-metrics.js";
import {
  computeMergePart as mergePart,
  computeShardPartial,
  mergeShardPartials,
  type AnalysisShard,
  type PartsStored,
  type ShardPieces,
} from "./shards.js";
import type { AnalysisMemo } from "./memo.js";

/** What a compute function may use: the context of a worker thread over a read-only store, and its progress. */
export interface ComputeContext extends AppContext {
  /** Fraction done, 0..1; shown as the analysis' progress. */
  onProgress(fraction: number): void;
  /** Kept between the tasks of an analysis in a warm worker thread (its shards and merge); absent: none kept. */
  memo?: AnalysisMemo;
}

/** Metric name → CSV text (header row first). The keys become the analysis' downloadable metrics. */
export type MetricCsvs = Record<string, string>;

/**
 * The contract every analysis computation implements. It must be
 * deterministic for a spec and data, must not write to the store (the runner
 * stores the results), and throws an Error whose message a user can act on
 * when the analysis cannot be computed (it becomes the failure reason).
 */
export type ComputeAnalysis = (spec: AnalysisSpec, ctx: ComputeContext) => Promise<MetricCsvs> | MetricCsvs;

export const SAMPLE_SIZE_HEADER = [
  "data_period",
  "day_type",
  "mode_of_travel",
  "days_with_data",
  "approximate_device_count",
  "approximate_trip_count",
];

/**
 * Sample size from the stored per-day tallies: for each requested period and
 * day type, the days with trips of the travel mode, the trips on them, and the
 * largest daily device count (devices are tallied per day, so distinct devices
 * over a period are not known; the daily peak is a lower bound).
 */
export async function sampleSizeCsv(spec: AnalysisSpec, store: Store): Promise<string> {
  const rows = (await samplePeriods(spec, store)).map((p) => [
    p.data_period,
    p.day_type,
    spec.travelMode,
    p.days_with_data,
    p.approximate_device_count,
    p.approximate_trip_count,
  ]);
  return toCsv(SAMPLE_SIZE_HEADER, rows);
}

/** The metrics of each analysis type, by its canonical name (see domain/analyses/catalogue.ts). */
const METRICS_OF_TYPE: Record<
  string,
  (spec: AnalysisSpec, ctx: ComputeContext) => MetricCsvs | Promise<MetricCsvs>
> = {
  OD_Analysis: computeOdMetrics,
  // The OD computation with the preset geography's areas as destination zones.
  OD_Preset_Geography: computeOdMetrics,
  Zone_Activity_Analysis: computeZoneActivityMetrics,
  OD_MF_Analysis: computeOdMfMetrics,
  Segment_Analysis: computeSegmentMetrics,
  AADT: computeAadtMetrics,
  Network_OD: computeNetworkOdMetrics,
  Network_Performance: computeNetworkPerformanceMetrics,
  Top_Routes_OD: computeTopRoutesMetrics,
  Top_Routes_ZA: computeTopRoutesMetrics,
};

/** Any analysis type: its metrics from the stored trips, and the sample behind them. */
export const computeAnalysis: ComputeAnalysis = async (spec, ctx) => {
  const metricsOf = METRICS_OF_TYPE[spec.analysisType];
  if (!metricsOf) throw new Error(`analysis type "${spec.analysisType}" cannot be computed by this version`);
  const metrics = await metricsOf(spec, ctx);
  metrics.sample_size = await sampleSizeCsv(spec, ctx.store);
  ctx.onProgress(1);
  return metrics;
};

/**
 * The shard contract (issue 15, see shards.ts): a compute module that exports these two lets the runner
 * split the analyses planShards splits; a module without them runs every analysis whole.
 */
export type ComputeShard = (
  spec: AnalysisSpec,
  shard: AnalysisShard,
  ctx: ComputeContext,
) => Promise<Uint8Array[]>;
/** Each shard's result is pieces (SHARD_PIECES): a merge is handed the pieces it reads, null elsewhere. */
export type MergeShards = (
  spec: AnalysisSpec,
  partials: readonly ShardPieces[],
  ctx: ComputeContext,
  /**
   * The results of the merge parts, when the merge was split (see shards.ts, MERGE_PART_JOB); "stored"
   * when they stored their rows as result pieces (the od_* metrics are then their header alone).
   */
  parts?: readonly Uint8Array[] | PartsStored,
) => Promise<MetricCsvs>;
/** One part of a split merge (optional: a compute module without it merges in one job). */
export type ComputeMergePart = (
  spec: AnalysisSpec,
  partials: readonly ShardPieces[],
  part: number,
  parts: number,
  ctx: ComputeContext,
) => Promise<Uint8Array>;

export const computeShard: ComputeShard = computeShardPartial;
export const computeMergePart: ComputeMergePart = mergePart;

/** The merged shards' metrics plus the sample behind them: what computeAnalysis answers for the whole. */
export const mergeShards: MergeShards = async (spec, partials, ctx, parts) => {
  const metrics = await mergeShardPartials(spec, partials, ctx, parts);
  metrics.sample_size = await sampleSizeCsv(spec, ctx.store);
  ctx.onProgress(1);
  return metrics;
};
