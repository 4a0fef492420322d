import type { MetricsProvider } from "../../engine/counts/metrics.js";

/** Tunables of the counts interface; tests override them through AppDeps.counts. */
export interface CountsConfig {
  /** Rows per page of a metrics answer. */
  metricsPageSize: number;
  /** Rows per page of a geometry answer. */
  geometryPageSize: number;
  /** How long later pages of a result stay available. */
  resultTtlMs: number;
  now: () => Date;
  /** Computes metric rows; defaults to the per-segment aggregates in the store. */
  metricsProvider?: MetricsProvider;
}

export const DEFAULT_COUNTS_CONFIG: CountsConfig = {
  metricsPageSize: 1_000,
  geometryPageSize: 5_000,
  resultTtlMs: 24 * 60 * 60 * 1000,
  now: () => new Date(),
};
