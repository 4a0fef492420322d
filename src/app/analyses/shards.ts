import { deserialize, serialize } from "node:v8";
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import type { Store, TripChunkEntry } from "../ports/store.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import {
  expansionMonths,
  mergeOdPartials,
  odMergePart,
  odMergeParts,
  odShardable,
  odShardPartial,
  scanMonths,
  type OdPartial,
} from "./od-metrics.js";

/**
 * Analysis shards (issue 15): an analysis split into parts that any worker computes, one per month ×
 * range of trip chunk ids, each returning its partial sums; a merge adds the partials and writes the
 * CSVs. The sums are exact (integer counts, whole milliseconds, weights on a binary grid: see
 * onWeightGrid), so the merged CSVs are byte-identical to the ones of one pass over all the trips.
 */
export interface AnalysisShard {
  /** YYYY-MM of the shard's trips (UTC month of start, as trips are filed). */
  month: string;
  /** Inclusive range of the chunk ids of that month it reads. */
  fromId: number;
  toId: number;
  /** Trips stored in those chunks when planned: a shard that finds others fails (compacted meanwhile). */
  trips: number;
  /**
   * Devices per month of the analysed span (the expansion factors' input), counted once when planned:
   * every shard weighs its trips alike, and the count (a heavy query on a large store) is not repeated
   * per shard. Absent in shards planned before it was added: the shard counts them itself.
   */
  devices?: [month: string, devices: number][];
}

/** Job kind and payload of one shard, a child of its analysis' job. */
export const SHARD_JOB = "analysis-shard";
export interface ShardJobPayload {
  analysisUuid: string;
  /** The analysis' job, which merges the shards. */
  parentJobId: string;
  index: number;
  total: number;
  shard: AnalysisShard;
}

/**
 * Job kind and payload of one merge part: once every shard is done, the od_* metrics (most of the
 * rows) are written by `parts` children side by side, each from every shard's partial sums; the
 * analysis' job then takes their CSVs and writes the rest. Children of the analysis' job after its shards.
 */
export const MERGE_PART_JOB = "analysis-merge-part";
export interface MergePartJobPayload {
  analysisUuid: string;
  parentJobId: string;
  part: number;
  parts: number;
  /** The analysis job's first `shards` children are its shards (their results, the partial sums). */
  shards: number;
}

/** Merge parts when none are configured: the od_* metrics written by 2 workers side by side. */
export const DEFAULT_MERGE_PARTS = 2;

/** Into how many merge parts (at most `max`) a sharded analysis' merge splits; 1: merged in one job. */
export function mergePartsOf(spec: AnalysisSpec, max: number): number {
  return odMergeParts(spec, max);
}

/** The types whose computation splits into shards; every other type runs whole, in one job. */
export const SHARDED_TYPES: readonly string[] = ["OD_Analysis", "OD_Preset_Geography"];

/**
 * Trips per shard when none is configured. Each shard's partial sums are read by every merge part, so
 * shards much smaller than this make the merge the longer task; 1,000,000 trips make 4 shards, about 2
 * per worker on 2 workers (docs/performance.md, "scale analysis").
 */
export const DEFAULT_SHARD_TRIPS = 250_000;

export function isShardable(spec: AnalysisSpec): boolean {
  return SHARDED_TYPES.includes(spec.analysisType) && odShardable(spec);
}

/**
 * The shards of an analysis: each month's chunks in id order, cut into runs of at least `shardTrips`
 * trips (the last run of a month takes the rest). Null when the analysis runs whole: its type (or
 * options) cannot be sharded, or it has at most one shard's worth of chunks.
 */
export async function planShards(
  spec: AnalysisSpec,
  store: Store,
  shardTrips = DEFAULT_SHARD_TRIPS,
): Promise<AnalysisShard[] | null> {
  if (!isShardable(spec)) return null;
  const shards = cutShards(await store.trips.chunkIndex(spec.country, scanMonths(spec)), shardTrips);
  if (shards.length <= 1) return null;
  const devices = [...(await store.tripStats.devicesByMonth(spec.country, expansionMonths(spec)))];
  return shards.map((shard) => ({ ...shard, devices }));
}

export function cutShards(chunks: readonly TripChunkEntry[], shardTrips: number): AnalysisShard[] {
  const shards: AnalysisShard[] = [];
  let open: AnalysisShard | null = null;
  for (const c of chunks) {
    if (!open || open.month !== c.month || open.trips >= shardTrips) {
      open = { month: c.month, fromId: c.id, toId: c.id, trips: 0 };
      shards.push(open);
    }
    open.toId = c.id;
    open.trips += c.tripCount;
  }
  return shards;
}

/** Computes one shard: its partial sums, serialised (v8) to be stored until the merge. */
export async function computeShardPartial(
  spec: AnalysisSpec,
  shard: AnalysisShard,
  ctx: ComputeContext,
): Promise<Uint8Array> {
  const month = { year: Number(shard.month.slice(0, 4)), month: Number(shard.month.slice(5, 7)) };
  const scope = { fromMonth: month, toMonth: month, chunkIds: { from: shard.fromId, to: shard.toId } };
  await assertUnchanged(spec, shard, ctx.store, scope);
  const partial = await odShardPartial(spec, ctx, scope, shard.devices && new Map(shard.devices));
  ctx.onProgress(1);
  return serialize(partial);
}

/**
 * Adds the partials of every shard (in shard order) and writes the analysis' metric CSVs; with the
 * results of its merge parts (computeMergePart), their od_* CSVs are taken as they are.
 */
export async function mergeShardPartials(
  spec: AnalysisSpec,
  partials: readonly Uint8Array[],
  ctx: ComputeContext,
  parts?: readonly Uint8Array[],
): Promise<MetricCsvs> {
  const odParts = parts?.map((p) => deserialize(p) as MetricCsvs);
  return await mergeOdPartials(spec, ctx, partials.map(readPartial), odParts);
}

/** Merge part `part` of `parts`: some od_* metrics' CSVs from every shard's partial sums, serialised (v8). */
export async function computeMergePart(
  spec: AnalysisSpec,
  partials: readonly Uint8Array[],
  part: number,
  parts: number,
  ctx: ComputeContext,
): Promise<Uint8Array> {
  return serialize(await odMergePart(spec, ctx, partials.map(readPartial), part, parts));
}

const readPartial = (bytes: Uint8Array) => deserialize(bytes) as OdPartial;

/** Compaction replaces chunks by new ones (new ids): a shard would then miss or double trips. */
async function assertUnchanged(
  spec: AnalysisSpec,
  shard: AnalysisShard,
  store: Store,
  scope: { fromMonth: { year: number; month: number }; toMonth: { year: number; month: number } },
): Promise<void> {
  const chunks = await store.trips.chunkIndex(spec.country, scope);
  const trips = chunks
    .filter((c) => c.id >= shard.fromId && c.id <= shard.toId)
    .reduce((sum, c) => sum + c.tripCount, 0);
  if (trips !== shard.trips)
    throw new Error(
      `the trips of ${shard.month} were compacted while the analysis ran (${trips} trips where ${shard.trips} were planned); create it again`,
    );
}
