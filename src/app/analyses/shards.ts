import { deserialize, serialize } from "node:v8";
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import type { ResultPiece, Store, TripChunkEntry } from "../ports/store.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { concatCellRecords, type CellRecords } from "../../engine/analysis/cell-table.js";
import {
  expansionMonths,
  mergeOdPartials,
  odMergePart,
  odRowPiece,
  odRowPieces,
  odShardable,
  odShardPieces,
  scanMonths,
  type OdPartial,
  type OdRowBytes,
  type OdRowRuns,
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
 * rows) are written by `parts` children side by side, each over its own runs of zone pairs from every
 * shard's partial sums; the analysis' job then lays their rows together and writes the rest. Children
 * of the analysis' job after its shards.
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

/**
 * A shard's result is pieces: piece 0 its sums but the OD cells, pieces 1..CELL_PIECES its OD cells cut
 * into runs of zone pairs. Merge part i of n reads piece 0 and the cell pieces j with ⌊j × n / CELL_PIECES⌋
 * = i, so no part reads or adds another's cells. 12 pieces split evenly into 1, 2, 3, 4 or 6 parts.
 */
export const CELL_PIECES = 12;
export const SHARD_PIECES = 1 + CELL_PIECES;

/** The pieces of every shard's result merge part `part` of `parts` reads (piece 0 first). */
export function piecesOfMergePart(part: number, parts: number): number[] {
  const cells = Array.from({ length: CELL_PIECES }, (_, j) => j).filter(
    (j) => Math.floor((j * parts) / CELL_PIECES) === part,
  );
  return [0, ...cells.map((j) => 1 + j)];
}

/** Into how many merge parts (at most `max`) a sharded analysis' merge splits; 1: merged in one job. */
export function mergePartsOf(max: number): number {
  return Math.max(1, Math.min(max, CELL_PIECES));
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
 * The shards of an analysis: each month's chunks in id order, cut into about equal runs of about
 * `shardTrips` trips. Null when the analysis runs whole: its type (or options) cannot be sharded, or it
 * has at most one shard's worth of chunks.
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

/**
 * Each month's chunks (in id order) cut into round(trips / shardTrips) runs (at least one) of about
 * equal trips: equal shards share out evenly over workers, where runs of at least `shardTrips` left a
 * short last one (1,000,000 trips in 250,000s: 4 shards, not 3 long and a short one).
 */
export function cutShards(chunks: readonly TripChunkEntry[], shardTrips: number): AnalysisShard[] {
  const shards: AnalysisShard[] = [];
  for (const month of chunksByMonth(chunks)) {
    const total = month.reduce((n, c) => n + c.tripCount, 0);
    const runs = Math.max(1, Math.round(total / shardTrips));
    let before = 0;
    let opened = 0;
    let open: AnalysisShard | null = null;
    for (const c of month) {
      // A new run starts at the chunk boundary nearest to the month's next multiple of total / runs.
      if (!open || (opened < runs && before + c.tripCount / 2 > (opened * total) / runs)) {
        open = { month: c.month, fromId: c.id, toId: c.id, trips: 0 };
        shards.push(open);
        opened++;
      }
      open.toId = c.id;
      open.trips += c.tripCount;
      before += c.tripCount;
    }
  }
  return shards;
}

/** Chunks in order, grouped by month (consecutive). */
function chunksByMonth(chunks: readonly TripChunkEntry[]): TripChunkEntry[][] {
  const months: TripChunkEntry[][] = [];
  for (const c of chunks) {
    const last = months[months.length - 1];
    if (last && last[0].month === c.month) last.push(c);
    else months.push([c]);
  }
  return months;
}

/**
 * A shard's result: the pieces of its partial sums (SHARD_PIECES), each serialised (v8) to be stored
 * until the merge; a piece of a result the merge does not need is not read.
 */
export type ShardPieces = readonly (Uint8Array | null)[];

/** Computes one shard: its partial sums, in SHARD_PIECES pieces (piece 0 all but the OD cells). */
export async function computeShardPartial(
  spec: AnalysisSpec,
  shard: AnalysisShard,
  ctx: ComputeContext,
): Promise<Uint8Array[]> {
  const month = { year: Number(shard.month.slice(0, 4)), month: Number(shard.month.slice(5, 7)) };
  const scope = { fromMonth: month, toMonth: month, chunkIds: { from: shard.fromId, to: shard.toId } };
  await assertUnchanged(spec, shard, ctx.store, scope);
  const devices = shard.devices && new Map(shard.devices);
  const { common, cells } = await odShardPieces(spec, ctx, scope, devices, CELL_PIECES);
  ctx.onProgress(1);
  return [serialize(common), ...cells.map((c) => serialize(c))];
}

/**
 * Adds the partials of every shard (in shard order) and writes the analysis' metric CSVs. With the
 * results of its merge parts (computeMergePart), their od_* rows are taken as they are, and only piece
 * 0 of each shard is read; without, every piece. `parts` "stored": the parts stored their rows as result
 * pieces (mergePartPieces), and the od_* metrics here are their header alone, which the pieces follow.
 */
export async function mergeShardPartials(
  spec: AnalysisSpec,
  partials: readonly ShardPieces[],
  ctx: ComputeContext,
  parts?: readonly Uint8Array[] | PartsStored,
): Promise<MetricCsvs> {
  const odParts = parts === PARTS_STORED ? [] : parts?.map(rowRunsOf);
  const pieces = odParts ? [0] : Array.from({ length: SHARD_PIECES }, (_, i) => i);
  return await mergeOdPartials(
    spec,
    ctx,
    partials.map((p) => readPartial(p, pieces)),
    odParts,
  );
}

/** Merge part `part` of `parts`: the od_* rows of its runs of zone pairs, packed (packRows). */
export async function computeMergePart(
  spec: AnalysisSpec,
  partials: readonly ShardPieces[],
  part: number,
  parts: number,
  ctx: ComputeContext,
): Promise<Uint8Array> {
  const pieces = piecesOfMergePart(part, parts);
  return packRows(
    await odMergePart(
      spec,
      ctx,
      partials.map((p) => readPartial(p, pieces)),
    ),
  );
}

/** First bytes of packed rows ("sfr1"); a v8-serialised result (an older part's) starts with 0xff. */
const PACKED_ROWS = [0x73, 0x66, 0x72, 0x31];

/**
 * A merge part's rows as one buffer: PACKED_ROWS, the index's byte length (u32, little-endian), the
 * index (JSON: [metric, run, byte length] per run with rows), then those runs' UTF-8 bytes back to back.
 * It crosses to the runner's thread without a copy, and the runner stores the runs as bytes (subarrays):
 * no text is made of them, serialised, copied into the other thread's heap and encoded again.
 */
export function packRows(runs: OdRowBytes): Uint8Array {
  const index: [metric: string, run: number, bytes: number][] = [];
  for (const [metric, list] of Object.entries(runs))
    list.forEach((blocks, run) => {
      const bytes = blocks.reduce((n, b) => n + b.length, 0);
      if (bytes > 0) index.push([metric, run, bytes]);
    });
  const head = Buffer.from(JSON.stringify(index), "utf8");
  const out = new Uint8Array(8 + head.length + index.reduce((n, [, , bytes]) => n + bytes, 0));
  out.set(PACKED_ROWS, 0);
  new DataView(out.buffer).setUint32(4, head.length, true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const list of Object.values(runs))
    for (const blocks of list)
      for (const b of blocks) {
        out.set(b, at);
        at += b.length;
      }
  return out;
}

/** The runs of packed rows (views into `packed`), or null for a v8-serialised result. */
function unpackRows(packed: Uint8Array): { metric: string; run: number; bytes: Uint8Array }[] | null {
  if (packed.length < 8 || PACKED_ROWS.some((b, i) => packed[i] !== b)) return null;
  const headLength = new DataView(packed.buffer, packed.byteOffset, 8).getUint32(4, true);
  const head = Buffer.from(packed.buffer, packed.byteOffset + 8, headLength).toString("utf8");
  let at = 8 + headLength;
  return (JSON.parse(head) as [string, number, number][]).map(([metric, run, length]) => {
    const bytes = packed.subarray(at, at + length);
    at += length;
    return { metric, run, bytes };
  });
}

/** A merge part's result as text per run (OdRowRuns): packed rows, or an older part's v8 result. */
function rowRunsOf(result: Uint8Array): OdRowRuns {
  const runs = unpackRows(result);
  if (!runs) return deserialize(result) as OdRowRuns;
  const out: OdRowRuns = {};
  for (const { metric, run, bytes } of runs)
    (out[metric] ??= [])[run] = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8");
  return out;
}

/** A merge given this in place of its parts' results: they stored their od_* rows as result pieces. */
export const PARTS_STORED = "stored";
export type PartsStored = typeof PARTS_STORED;

/**
 * The od_* rows of merge part `part` of `parts` (computeMergePart's result) as the result pieces it
 * stores (AnalysisRepo.putResultPieces), numbered so that every part's pieces read back in order give
 * the CSVs of one pass. The parts write them side by side; the merge then writes only the rest.
 */
export function mergePartPieces(result: Uint8Array, part: number, parts: number): ResultPiece[] {
  const runs = unpackRows(result);
  if (!runs) return odRowPieces(deserialize(result) as OdRowRuns, part, parts);
  return runs.map(({ metric, run, bytes }) => ({ metric, piece: odRowPiece(run, part, parts), csv: bytes }));
}

/** A shard's partial sums from its pieces `pieces` (piece 0 first): its cells are those pieces' cells. */
function readPartial(shard: ShardPieces, pieces: readonly number[]): OdPartial {
  const piece = (i: number) => {
    const bytes = shard[i];
    if (!bytes) throw new Error(`piece ${i} of a shard's partial sums is missing`);
    return deserialize(bytes) as unknown;
  };
  const common = piece(0) as OdPartial;
  const cells = pieces.slice(1).map((i) => piece(i) as CellRecords);
  return { ...common, aggregator: { ...common.aggregator, cells: concatCellRecords(cells) } };
}

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
