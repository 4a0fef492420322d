import type { MetricsProvider, MetricsQuery } from "../../engine/counts/metrics.js";
import { tableOfRows, type MetricTable } from "../../engine/counts/metric-table.js";
import {
  parseMetricsFilters,
  type MetricsFilters,
  type MetricsRequestInput,
} from "../../domain/counts/metrics-request.js";
import {
  resolveSelection,
  type ResolvedSelection,
  type SelectionRequest,
} from "../../domain/counts/resolve.js";
import type { OsmIdRow, OsmIdSearch } from "../../domain/osm-id-search.js";
import { metricsTableFromAggregates, tripTalliesOf } from "../counts/metrics.js";
import { assertWithinQuota, chargeMetricsCall, unitsOf, type ChargedKey } from "../counts/metering.js";
import { retryLater } from "../../domain/errors.js";
import { PAST_DEADLINE } from "./wire.js";
import { searchOsmIds } from "../networks.js";
import { firstPage, type ResultPage } from "../counts/results.js";
import type { AppContext } from "../context.js";

/**
 * The requests heavy enough to leave the event loop: counts metrics and selections, and OSM-way search.
 * Each is a plain function of serialisable input to serialisable output over a store and the networks,
 * so a worker thread (src/main/heavy-worker.ts) runs exactly what the inline runner runs. They read the
 * store, and write only the later pages of long answers (countsResults) and the metrics call's charge,
 * so no big result crosses threads.
 */
export interface HeavyContext extends AppContext {
  /** Replaces the store's metrics (tests and benchmarks); such a provider only runs inline. */
  metricsProvider?: MetricsProvider;
  /**
   * Claims the task's answer before its writes commit: false when the pool has answered the request
   * already (503 at its deadline), so the writes roll back; once claimed, the pool waits for the answer.
   * Absent inline, where nothing answers for the task.
   */
  claimAnswer?: () => boolean;
}

/**
 * The writes of an answer (its later pages, its charge) in one transaction, committed only when the
 * answer is still wanted: a request answered 503 at its deadline leaves nothing stored and is not charged.
 */
async function answerWrites<T>(ctx: HeavyContext, write: () => Promise<T>): Promise<T> {
  return await ctx.store.transaction(async () => {
    const value = await write();
    if (ctx.claimAnswer && !ctx.claimAnswer())
      throw retryLater("overloaded", { reason: PAST_DEADLINE, seconds: 1 }, 1);
    return value;
  });
}

/** How a long answer is paged: its first page is answered, the others stored for the organization. */
export interface PagingSpec {
  orgId: string;
  pageSize: number;
  ttlMs: number;
  /** ISO time of the request (the result expires ttlMs after it). */
  now: string;
}

export type CountsMetricsInput = SelectionRequest &
  MetricsRequestInput & {
    /** Units the key may still spend (null: no quota): over it, the rows are not computed. */
    unitsLeft: number | null;
    paging: PagingSpec;
    /** The key charged for the call, in the transaction that stores its pages. */
    key: ChargedKey;
  };

export interface CountsMetricsOutput {
  segments: number;
  /** Null when the call would cost more than `unitsLeft` (the caller answers quota_exceeded). */
  page: ResultPage | null;
}

/** The first page of `rows`; the rest stored for later pages. */
async function pageOf(
  ctx: HeavyContext,
  kind: "metrics" | "geometry",
  columns: string[],
  table: MetricTable,
  paging: PagingSpec,
  extra?: Record<string, unknown>,
): Promise<ResultPage> {
  const { orgId, pageSize, ttlMs, now } = paging;
  return await firstPage(ctx.store, {
    orgId,
    kind,
    columns,
    extra,
    table,
    pageSize,
    ttlMs,
    now: new Date(now),
  });
}

/** What the metrics engine is asked for a selection and the metrics-only filters. */
export function metricsQuery(selection: ResolvedSelection, filters: MetricsFilters): MetricsQuery {
  const { startHour, endHour } = filters.dayPart;
  return {
    country: selection.country,
    segments: selection.segments,
    fields: filters.fields,
    months: filters.months,
    daysOfWeek: filters.daysOfWeek,
    hours: Array.from({ length: endHour - startHour + 1 }, (_, i) => startHour + i),
    direction: filters.direction,
    vehicleClasses: selection.mode.vehicleClasses,
    sources: filters.sources,
  };
}

const GEOMETRY_COLUMNS = ["segment_id", "line_geometry"];

/** The metric columns of a query: from the store's sums, or from the rows of a plugged-in provider. */
async function metricsTable(ctx: HeavyContext, query: MetricsQuery): Promise<MetricTable> {
  if (!ctx.metricsProvider)
    return await metricsTableFromAggregates(
      ctx.store.segmentStats,
      tripTalliesOf(ctx.store.tripStats),
    )(query);
  return tableOfRows([...(await ctx.metricsProvider(query))], query.fields.length);
}

export const HEAVY_TASKS = {
  /**
   * Selection, then the metric rows of `POST /counts/v1/metrics`; the later pages and the charge commit
   * together. No page when the key's units would not cover the call (the caller answers why).
   */
  async countsMetrics(ctx: HeavyContext, input: CountsMetricsInput): Promise<CountsMetricsOutput> {
    const filters = parseMetricsFilters(input);
    const selection = await resolveSelection(ctx.networks, input);
    const segments = selection.segments.length;
    const fields = filters.fields.length;
    if (input.unitsLeft !== null && unitsOf(segments, fields) > input.unitsLeft)
      return { segments, page: null };
    const table = await metricsTable(ctx, metricsQuery(selection, filters));
    const extra = { data_version: filters.dataVersion };
    const now = new Date(input.paging.now);
    const page = await answerWrites(ctx, async () => {
      // Checked again with the charge: another call of the key may have spent units meanwhile.
      await assertWithinQuota(ctx.store, input.key, unitsOf(segments, fields), now);
      await chargeMetricsCall(ctx.store, input.key, segments, fields, now);
      return await pageOf(ctx, "metrics", filters.fields, table, input.paging, extra);
    });
    return { segments, page };
  },

  /** The first page of the selected segments' ids and lines (`POST /counts/v1/geometry`). */
  async countsGeometry(
    ctx: HeavyContext,
    input: { selection: SelectionRequest; paging: PagingSpec },
  ): Promise<ResultPage> {
    const { segments } = await resolveSelection(ctx.networks, input.selection);
    const rows = segments.map((s) => [s.id, { type: "LineString", coordinates: s.coords }]);
    const table = tableOfRows(rows, GEOMETRY_COLUMNS.length);
    return await answerWrites(ctx, () => pageOf(ctx, "geometry", GEOMETRY_COLUMNS, table, input.paging));
  },

  /** How many segments the selection holds (`POST /counts/v1/segmentcount`). */
  async countsSegmentCount(ctx: HeavyContext, input: SelectionRequest): Promise<number> {
    return (await resolveSelection(ctx.networks, input)).segments.length;
  },

  /** OSM ways meeting a polygon or radius (`POST /api/v2/osm_ids/search`). */
  async osmIdSearch(ctx: HeavyContext, input: OsmIdSearch): Promise<OsmIdRow[]> {
    return await searchOsmIds(input, ctx.store.network, ctx.networks);
  },
};

export type HeavyTaskName = keyof typeof HEAVY_TASKS;
export type HeavyInput<N extends HeavyTaskName> = Parameters<(typeof HEAVY_TASKS)[N]>[1];
export type HeavyOutput<N extends HeavyTaskName> = Awaited<ReturnType<(typeof HEAVY_TASKS)[N]>>;

/** Who asks for a heavy task, and by when its answer is due (a pool's admission control; ignored inline). */
export interface HeavyAdmission {
  /** An API key id: a pool refuses one key that floods it (429) before the others. */
  caller?: string;
  /**
   * `performance.now()` by which the answer is due (the request's arrival plus its budget): a pool sheds
   * what its queue would not finish by then (503 `overloaded`) rather than let the client wait past it.
   */
  deadline?: number;
}

/** Why a request is shed (503 `overloaded`), and when to retry: a plain value, so refusing raises no error. */
export interface Refusal {
  reason: string;
  seconds: number;
}

/** Runs heavy tasks: inline (below), or on a worker-thread pool with admission control (src/main/heavy-pool.ts). */
export interface HeavyRunner {
  run<N extends HeavyTaskName>(
    name: N,
    input: HeavyInput<N>,
    admission?: HeavyAdmission,
  ): Promise<HeavyOutput<N>>;
  /**
   * The refusal a new `name` request due by `deadline` would get now (503 `overloaded`), or null: asked
   * before the body is read or the key looked up, so shedding costs next to nothing.
   */
  refusal(name: HeavyTaskName, deadline?: number): Refusal | null;
  /**
   * A heavy-route request let through by `refusal`, on its way to `run` (key, quota and the store first):
   * counted against the depth until the returned function is called (its response ended), so requests
   * waiting for the store before the pool are bounded too. A runner without admission control has none.
   */
  arrive?(): () => void;
  close(): Promise<void>;
}

/** Runs every task on the calling thread: the default, and what tests without a pool use. */
export function inlineRunner(ctx: HeavyContext): HeavyRunner {
  return {
    async run<N extends HeavyTaskName>(name: N, input: HeavyInput<N>): Promise<HeavyOutput<N>> {
      const task = HEAVY_TASKS[name] as (c: HeavyContext, i: HeavyInput<N>) => Promise<HeavyOutput<N>>;
      return await task(ctx, input);
    },
    refusal: () => null,
    close: async () => {},
  };
}
