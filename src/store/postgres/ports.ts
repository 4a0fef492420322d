import type { TripColumns } from "../../engine/trips/columns.js";
import type { Job, JobQueue } from "../../app/ports/job-queue.js";
import type {
  AccountRepo,
  AnalysisRepo,
  CountsResultRepo,
  NetworkRepo,
  NotificationRepo,
  PresetAreaRepo,
  SecurityRepo,
  SegmentStatsRepo,
  TagRepo,
  TripRepo,
  TripScanOptions,
  TripStatsRepo,
  UsageRepo,
  ZoneSetRepo,
} from "../../app/ports/store.js";

/**
 * The storage and queue ports as they become with issue 12: every method answers a Promise. Until the
 * ports themselves are asynchronous, the networked adapters (PostgreSQL, BullMQ) implement this mirror;
 * the SQLite store, whose methods answer plain values, satisfies it through `Awaitable`.
 */
export type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K];
};

/** Either shape: what the port contract tests accept, so one suite runs against both backends. */
export type Awaitable<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => R | Promise<Awaited<R>> : T[K];
};

export interface AsyncTripRepo extends Omit<Async<TripRepo>, "scan"> {
  /** Column chunks in month order, fetched a few at a time. */
  scan(country: string, options?: TripScanOptions): AsyncIterable<TripColumns>;
}

export type AsyncJobQueue = Async<JobQueue>;
export type { Job };

export interface AsyncStore {
  readonly accounts: Async<AccountRepo>;
  readonly network: Async<NetworkRepo>;
  readonly zoneSets: Async<ZoneSetRepo>;
  readonly tripStats: Async<TripStatsRepo>;
  readonly segmentStats: Async<SegmentStatsRepo>;
  readonly countsResults: Async<CountsResultRepo>;
  readonly usage: Async<UsageRepo>;
  readonly analyses: Async<AnalysisRepo>;
  readonly jobs: AsyncJobQueue;
  readonly trips: AsyncTripRepo;
  readonly presetAreas: Async<PresetAreaRepo>;
  readonly tags: Async<TagRepo>;
  readonly notifications: Async<NotificationRepo>;
  readonly security: Async<SecurityRepo>;
  /** Runs `fn` atomically: every repository call made inside it (awaited) commits together or not at all. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
