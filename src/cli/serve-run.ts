import { createServer } from "node:net";
import { buildApp } from "../api/app.js";
import { ensureDemoData } from "../main/bootstrap.js";
import {
  basemapOf,
  configFromEnv,
  jobLeaseOf,
  overloadSettingsOf,
  poolSettingsOf,
  rateLimitOf,
  shutdownMsOf,
} from "../config/config.js";
import { HeavyPool } from "../main/heavy-pool.js";
import { webBundleSettled } from "../main/web-build.js";
import { completionNotifier } from "../app/analyses/completion-webhook.js";
import { requeueOrphans } from "../app/analyses/lifecycle.js";
import { JobRunner } from "../jobs/runner.js";
import { IngestChunkJobs } from "../jobs/ingest-chunk-job.js";
import type { AppContext } from "../app/context.js";
import type { StoreDescription } from "../app/ports/store.js";
import { ANALYSIS_WORKER, openServerContext } from "../main/runtime.js";
import { sharedRateCountersFromEnv } from "../queue/shared-rate-counters.js";
import type { Role } from "./serve.js";
import { stopOnSignals } from "./stop-signals.js";

/** The options `runServe` uses (checked by serve.ts). */
export interface ServeRunOptions {
  port: string;
  host: string;
  demo: boolean;
  jobWorkers: number;
}

/** The server of `role`: HTTP and job runners (all), HTTP only (api) or job runners only (worker). */
export async function runServe(dataDir: string, opts: ServeRunOptions, role: Role): Promise<void> {
  const config = configFromEnv();
  const leaseMs = jobLeaseOf(config);
  if (role === "worker") return runWorkers(dataDir, opts.jobWorkers, leaseMs);
  // A wrong basemap setting stops the start with its reason rather than leaving the map blank.
  const basemap = basemapOf(config);
  const perMinute = rateLimitOf(config);
  const pool = poolSettingsOf();
  const overload = overloadSettingsOf();
  // Fail in one line before the build and demo import work, not with a stack trace after it.
  const busy = await portProblem(Number(opts.port), opts.host);
  if (busy) {
    console.error(`error: ${busy}`);
    process.exit(1);
  }
  const ctx = await openServerContext(dataDir);
  if (opts.demo) await ensureDemoData(ctx, dataDir, (line) => console.log(line));
  // Counts and polygon searches run on worker threads with admission control (after the demo import,
  // so the threads read the imported networks).
  const heavy = pool.threads > 0 ? await HeavyPool.start(threadStoreOf(ctx), pool) : undefined;
  // Behind a load balancer the API processes share one set of rate-limit counters, in Redis.
  const rateCounters = await sharedRateCountersFromEnv();
  // The web bundle may still be building (npm start's first build); the app lists its files once.
  if (!config.webRoot)
    await webBundleSettled().catch((error: Error) => {
      console.error(`error: ${error.message}`);
      process.exit(1);
    });
  const app = await buildApp({
    ...ctx,
    heavy,
    overload,
    logger: true,
    webRoot: config.webRoot,
    basemap,
    security: {
      trustProxy: config.trustProxy,
      rateLimits: {
        ...(perMinute ? { perKey: perMinute, perSession: perMinute } : {}),
        shared: rateCounters,
      },
    },
  });
  // One process runs API and jobs by default; jobs run in worker threads, off the request path.
  // Each runner claims one job at a time under its own lease; several run analyses side by side.
  const runners =
    role === "all" ? await startRunners(ctx, opts.jobWorkers, leaseMs, (line) => app.log.info(line)) : null;
  stopOnSignals(
    async () => {
      await runners?.stop();
      await app.close();
      await heavy?.close();
      await rateCounters?.close();
      await ctx.store.close();
    },
    shutdownMsOf(),
    (line) => app.log.warn(line),
  );
  await app.listen({ port: Number(opts.port), host: opts.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  const shown = LOCAL_ADDRESSES.has(opts.host) ? "localhost" : opts.host;
  console.log(`Streetflow listening on http://${shown}:${port} (bound to ${opts.host}; API docs at /docs)`);
}

/** How often a process with runners looks for analyses whose job is missing from the queue. */
const REQUEUE_INTERVAL_MS = 60_000;

/**
 * The analysis job runners of this process, each claiming one job at a time under its own lease, after
 * (and then every minute) giving a job to every analysis that lacks one (`requeueOrphans`).
 */
async function startRunners(
  ctx: AppContext,
  count: number,
  leaseMs: number,
  log: (line: string) => void,
): Promise<{ stop(): Promise<void> }> {
  const requeue = () =>
    requeueOrphans(ctx.store).then(
      (found) =>
        found.forEach((a) => log(`analysis ${a.name} (${a.uuid}) had no job in the queue: queued again`)),
      (e: unknown) => log(`requeueing analyses failed: ${e instanceof Error ? e.message : String(e)}`),
    );
  await requeue();
  const timer = setInterval(() => void requeue(), REQUEUE_INTERVAL_MS).unref();
  // Ingest chunks match on one thread per runner, kept warm across chunks.
  const ingestChunks = new IngestChunkJobs(ctx, count);
  const runners = await startJobRunners(ctx, count, leaseMs, log, ingestChunks);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(runners.map((r) => r.stop()));
      await ingestChunks.close();
    },
  };
}

function startJobRunners(
  ctx: AppContext,
  count: number,
  leaseMs: number,
  log: (line: string) => void,
  ingestChunks: IngestChunkJobs,
): Promise<JobRunner[]> {
  const workerStore = threadStoreOf(ctx);
  return Promise.all(
    Array.from({ length: count }, () =>
      new JobRunner({
        store: ctx.store,
        queue: ctx.store.jobs,
        leaseMs,
        workerStore,
        workerModule: ANALYSIS_WORKER,
        shardTrips: configFromEnv().shardTrips,
        log,
        onFinished: completionNotifier(ctx.store, log),
        ingestChunks,
        // Processes sharing a Redis queue take shards: their threads warm up before the first one comes.
        warm: ctx.store.jobs.flows !== undefined,
      }).start(),
    ),
  );
}

/** How worker threads open the server's store (openServerContext always describes it). */
function threadStoreOf(ctx: AppContext): StoreDescription {
  if (!ctx.storeDescription) throw new Error("worker threads need a store they can open");
  return ctx.storeDescription;
}

/**
 * A worker process: job runners and no HTTP server. On SIGTERM or SIGINT each runner hands its job
 * back to the queue (release) before the process exits, so no lease is left to run out.
 */
async function runWorkers(dataDir: string, count: number, leaseMs: number): Promise<void> {
  const ctx = await openServerContext(dataDir);
  const log = (line: string) => console.log(line);
  const runners = await startRunners(ctx, count, leaseMs, log);
  stopOnSignals(
    async () => {
      await runners.stop();
      await ctx.store.close();
    },
    shutdownMsOf(),
    log,
  );
  log(`Streetflow worker: ${count} job runner${count === 1 ? "" : "s"} (pid ${process.pid})`);
}

/** Why the server could not listen on host:port (taken, not permitted), or null when it can. */
function portProblem(port: number, host: string): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) =>
      resolve(
        err.code === "EADDRINUSE"
          ? `port ${port} on ${host} is already in use; stop the other process or choose --port (env PORT)`
          : `cannot listen on ${host}:${port} (${err.code ?? err.message})`,
      ),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** Addresses a browser on this machine reaches as localhost. */
const LOCAL_ADDRESSES = new Set(["127.0.0.1", "::1", "0.0.0.0", "::", "localhost"]);
