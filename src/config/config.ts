import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { fail } from "../domain/errors.js";

export interface Config {
  dataDir: string;
  port: number;
  host: string;
  /** Analyses computed at the same time (one worker thread each). */
  jobWorkers: number;
  /**
   * STREETFLOW_JOB_LEASE_MS as given: how long a job runner's lease lasts without a heartbeat, i.e. how
   * soon a job whose process died (kill -9, lost host) is run again elsewhere; checked by `jobLeaseOf`.
   */
  jobLease?: string;
  /** The built web application to serve at `/` (default dist/web of the installation). */
  webRoot?: string;
  /** STREETFLOW_BASEMAP_URL / _ATTRIBUTION as given; checked by `basemapOf` when the server starts. */
  basemapUrl?: string;
  basemapAttribution?: string;
  /** STREETFLOW_TRUST_PROXY: `true`, or the proxy's addresses (comma-separated); see docs/security.md. */
  trustProxy: boolean | string[];
  /** STREETFLOW_RATE_LIMIT as given; checked by `rateLimitOf` when the server starts. */
  rateLimit?: string;
  /**
   * STREETFLOW_SHARD_TRIPS: with the Redis queue, trips per analysis shard (child job); 0 computes every
   * analysis whole. See docs/analyses.md (shards).
   */
  shardTrips: number;
}

/**
 * A map drawn under Streetflow's own layers in the web application: XYZ raster tiles (a URL template
 * with {z}, {x} and {y}) or a MapLibre style (a URL ending in .json). None by default: self-hosted
 * installations are often offline.
 */
export interface Basemap {
  url: string;
  attribution: string | null;
  type: "raster" | "style";
}

/** Settings from the environment; CLI flags override them. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    dataDir: resolve(env.STREETFLOW_DATA_DIR ?? "./var"),
    port: Number(env.PORT ?? 8080),
    // Loopback by default: a fresh install with its demo key is not reachable from the network until
    // HOST (or --host) says so, e.g. HOST=0.0.0.0 behind a reverse proxy or in a container.
    host: env.HOST?.trim() || "127.0.0.1",
    // Two by default: a long analysis does not hold up a short one; more only if the machine has cores.
    jobWorkers: Number(env.STREETFLOW_JOB_WORKERS ?? Math.min(2, availableParallelism())),
    jobLease: env.STREETFLOW_JOB_LEASE_MS?.trim() || undefined,
    webRoot: env.STREETFLOW_WEB_ROOT ? resolve(env.STREETFLOW_WEB_ROOT) : undefined,
    basemapUrl: env.STREETFLOW_BASEMAP_URL?.trim() || undefined,
    basemapAttribution: env.STREETFLOW_BASEMAP_ATTRIBUTION?.trim() || undefined,
    trustProxy: trustProxyOf(env.STREETFLOW_TRUST_PROXY),
    rateLimit: env.STREETFLOW_RATE_LIMIT?.trim() || undefined,
    shardTrips: shardTripsOf(env.STREETFLOW_SHARD_TRIPS),
  };
}

/** Trips per analysis shard when STREETFLOW_SHARD_TRIPS is not set (app/analyses/shards.ts says the same). */
const DEFAULT_SHARD_TRIPS = 250_000;

/** Trips per analysis shard: STREETFLOW_SHARD_TRIPS, default 250,000. */
function shardTripsOf(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_SHARD_TRIPS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw fail("invalid_shard_trips", undefined, "STREETFLOW_SHARD_TRIPS");
  return n;
}

/**
 * The configured basemap, or null without one. Throws a message naming the variable when the URL is
 * neither http(s) nor a path on this server (`/tiles/{z}/{x}/{y}.png`), or is a tile template without
 * {z}, {x} and {y}.
 */
export function basemapOf(config: Pick<Config, "basemapUrl" | "basemapAttribution">): Basemap | null {
  const url = config.basemapUrl;
  if (!url) return null;
  // A DomainError, so the CLI prints the reason as one line.
  const invalid = (why: string) =>
    fail("invalid_basemap_url", { reason: why, url }, "STREETFLOW_BASEMAP_URL");
  if (!/^(https?:\/\/[^/]+|\/)/i.test(url)) throw invalid("must start with http://, https:// or /");
  const path = url.split(/[?#]/)[0];
  const type = path.toLowerCase().endsWith(".json") ? "style" : "raster";
  if (type === "raster" && !["{z}", "{x}", "{y}"].every((p) => url.includes(p)))
    throw invalid("must be a tile template with {z}, {x} and {y}, or a style URL ending in .json");
  return { url, attribution: config.basemapAttribution ?? null, type };
}

export const databaseFile = (dataDir: string) => resolve(dataDir, "streetflow.db");

function trustProxyOf(value: string | undefined): boolean | string[] {
  const v = value?.trim() ?? "";
  if (v === "" || v === "false") return false;
  if (v === "true") return true;
  return v.split(",").map((a) => a.trim());
}

/**
 * The heavy-request pool (docs/deployment.md, "Heavy requests and admission control"): worker threads
 * (STREETFLOW_POOL_THREADS; 0 runs heavy requests inline, with no admission control), requests queued or
 * running at once (STREETFLOW_POOL_MAX_QUEUE), per key (STREETFLOW_POOL_PER_KEY), the longest wait for a
 * thread (STREETFLOW_POOL_MAX_WAIT_MS) and the time limit per request (STREETFLOW_POOL_TIME_LIMIT_MS).
 */
export interface PoolSettings {
  threads: number;
  maxDepth: number;
  perKey: number;
  maxWaitMs: number;
  timeLimitMs: number;
}

/** A whole-number setting of at least `min` from the environment, or `fallback` when unset. */
function wholeSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min)
    throw fail("invalid_option", { reason: `${name} must be a whole number of at least ${min}` }, name);
  return n;
}

/**
 * On SQLite a heavy request's thread computes throughout: one core stays with the event loop (HTTP,
 * auth, paging). On PostgreSQL the thread waits on the database for much of each request (a year of
 * counts: about half), so one thread per core (at least 2) keeps the cores busy; more only queue for CPU
 * (docs/performance.md, "Heavy-request threads on PostgreSQL").
 */
function defaultPoolThreads(env: NodeJS.ProcessEnv): number {
  const cores = availableParallelism();
  return env.STREETFLOW_DATABASE_URL?.trim() ? Math.max(2, cores) : Math.max(1, cores - 1);
}

export function poolSettingsOf(env: NodeJS.ProcessEnv = process.env): PoolSettings {
  const whole = (name: string, fallback: number, min: number) => wholeSetting(env, name, fallback, min);
  const threads = whole("STREETFLOW_POOL_THREADS", defaultPoolThreads(env), 0);
  // About what a thread gets through in the 2 s wait limit at ~100 ms a request (1,000 segments × 12 months).
  const maxDepth = whole("STREETFLOW_POOL_MAX_QUEUE", 16 * Math.max(1, threads), 1);
  return {
    threads,
    maxDepth,
    perKey: whole("STREETFLOW_POOL_PER_KEY", Math.max(1, Math.floor(maxDepth / 2)), 1),
    maxWaitMs: whole("STREETFLOW_POOL_MAX_WAIT_MS", 2_000, 1),
    timeLimitMs: whole("STREETFLOW_POOL_TIME_LIMIT_MS", 30_000, 1),
  };
}

/**
 * Load shedding of an API process (docs/deployment.md, "Heavy requests and admission control"): the
 * deadline of each request, and when the event loop itself counts as overloaded (@fastify/under-pressure;
 * 0 turns a check off).
 */
export interface OverloadSettings {
  /** STREETFLOW_REQUEST_DEADLINE_MS: a heavy request's answer is due this long after it arrives. */
  deadlineMs: number;
  /** STREETFLOW_SHED_EVENT_LOOP_DELAY_MS: mean event-loop delay over a sample above which requests are shed. */
  maxEventLoopDelayMs: number;
  /** STREETFLOW_SHED_EVENT_LOOP_UTILIZATION (per cent): event-loop busy share over a sample above which requests are shed. */
  maxEventLoopUtilizationPct: number;
  /** STREETFLOW_SHED_HEAP_MB: V8 heap in use above which requests are shed. */
  maxHeapMb: number;
  /** STREETFLOW_SHED_SAMPLE_MS: how often the event loop and heap are measured. */
  sampleIntervalMs: number;
}

export function overloadSettingsOf(env: NodeJS.ProcessEnv = process.env): OverloadSettings {
  const whole = (name: string, fallback: number, min: number) => wholeSetting(env, name, fallback, min);
  // Off by default: a loop kept busy by one user's page load is busy, not overloaded (measured at load 26:
  // 98 % over 250 ms refused most of a single browser's first requests).
  const utilization = whole("STREETFLOW_SHED_EVENT_LOOP_UTILIZATION", 0, 0);
  if (utilization > 100)
    throw fail(
      "invalid_option",
      { reason: "STREETFLOW_SHED_EVENT_LOOP_UTILIZATION is a percentage (0 to 100)" },
      "STREETFLOW_SHED_EVENT_LOOP_UTILIZATION",
    );
  return {
    // 2 s minus a margin for what the pool does not see: the event loop before and after the work.
    deadlineMs: whole("STREETFLOW_REQUEST_DEADLINE_MS", 1_500, 1),
    // Requests already wait about a second in the loop: shed before they would wait two.
    maxEventLoopDelayMs: whole("STREETFLOW_SHED_EVENT_LOOP_DELAY_MS", 1_000, 0),
    maxEventLoopUtilizationPct: utilization,
    maxHeapMb: whole("STREETFLOW_SHED_HEAP_MB", 0, 0),
    // A whole second, so one long callback does not make the mean.
    sampleIntervalMs: whole("STREETFLOW_SHED_SAMPLE_MS", 1_000, 10),
  };
}

/** Requests per minute per key and per session (STREETFLOW_RATE_LIMIT), unless an admin sets a key's own. */
export function rateLimitOf(config: Pick<Config, "rateLimit">): number | undefined {
  if (config.rateLimit === undefined) return undefined;
  const n = Number(config.rateLimit);
  if (!Number.isInteger(n) || n < 1) throw fail("invalid_rate_limit", undefined, "STREETFLOW_RATE_LIMIT");
  return n;
}

/**
 * STREETFLOW_SHUTDOWN_MS: how long a process may take to stop on SIGTERM (hand back jobs, finish
 * requests, close pools) before it exits 1 anyway; below Docker's 10 s and Kubernetes' 30 s grace.
 */
export function shutdownMsOf(env: NodeJS.ProcessEnv = process.env): number {
  return wholeSetting(env, "STREETFLOW_SHUTDOWN_MS", 8_000, 1);
}

/** The default job lease: long enough that a loaded machine's heartbeats (every third of it) arrive. */
export const DEFAULT_JOB_LEASE_MS = 60_000;

/** The job runners' lease in ms (STREETFLOW_JOB_LEASE_MS, at least 300), default 60 s. */
export function jobLeaseOf(config: Pick<Config, "jobLease">): number {
  if (config.jobLease === undefined) return DEFAULT_JOB_LEASE_MS;
  const n = Number(config.jobLease);
  if (!Number.isInteger(n) || n < 300)
    throw fail(
      "invalid_option",
      { reason: "STREETFLOW_JOB_LEASE_MS must be a whole number of milliseconds, at least 300" },
      "STREETFLOW_JOB_LEASE_MS",
    );
  return n;
}
