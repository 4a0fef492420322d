import type { FastifyInstance, FastifyRequest } from "fastify";
import { monitorEventLoopDelay } from "node:perf_hooks";
import underPressure from "@fastify/under-pressure";
import type { HeavyAdmission, HeavyTaskName } from "../app/heavy/tasks.js";
import type { OverloadSettings } from "../config/config.js";
import { sendOverloaded } from "./errors.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The heavy task the route's work is (src/app/heavy/tasks.ts): shed when the pool cannot take it in time. */
    heavy?: HeavyTaskName;
    /** Answered however busy the event loop is (`/healthz`). */
    neverShed?: boolean;
  }
  interface FastifyRequest {
    /** `performance.now()` by which the answer is due: arrival plus the deadline budget. */
    deadline: number;
    /** Refused by load shedding before any work (tallied in the log rather than logged alone). */
    shed: boolean;
  }
}

/** Route config of a route whose work is the heavy task `task`. */
export const heavyRoute = (task: HeavyTaskName) => ({ heavy: task });

/** Route config of a route answered even when the event loop is overloaded. */
export const NEVER_SHED = { neverShed: true } as const;

/** What a heavy route hands the pool: the caller's key and the request's deadline. */
export const admissionOf = (request: FastifyRequest, caller: string | undefined): HeavyAdmission => ({
  caller,
  deadline: request.deadline,
});

/** No deadline and no event-loop shedding: the default of `buildApp` (tests, embedded use). */
export const NO_SHEDDING: OverloadSettings = {
  deadlineMs: Infinity,
  maxEventLoopDelayMs: 0,
  maxEventLoopUtilizationPct: 0,
  maxHeapMb: 0,
  sampleIntervalMs: 1_000,
};

/** Retry-After of an event-loop refusal: a few samples later the loop has had time to drain. */
const EVENT_LOOP_RETRY_SECONDS = 2;

/**
 * Root onRequest hooks, so they run before authentication, body parsing and any store look-up, and a
 * refusal costs next to nothing. First every route but `/healthz` is answered 503 `overloaded` while the
 * event loop runs late over two samples in a row (EventLoopLateness) or, with @fastify/under-pressure,
 * while it is too busy or the heap too large; then each
 * request gets its deadline, and a heavy route is refused at once when the pool could not answer it by
 * then (the pool checks again, with the key's share, when the work is submitted). An admitted heavy
 * request counts against the pool's depth from then on, before it reaches the pool.
 */
export async function registerLoadShedding(app: FastifyInstance, settings: OverloadSettings): Promise<void> {
  const { maxEventLoopDelayMs, maxEventLoopUtilizationPct, maxHeapMb } = settings;
  if (maxEventLoopUtilizationPct + maxHeapMb > 0) await registerPressureChecks(app, settings);
  const lateness = maxEventLoopDelayMs > 0 ? measureLateness(app, settings) : null;
  app.decorateRequest("deadline", Infinity);
  app.decorateRequest("shed", false);
  // A callback hook: answering without calling `done` ends the request here (Fastify's early response).
  app.addHook("onRequest", (request, reply, done) => {
    const lateMs = request.routeOptions.config.neverShed ? null : (lateness?.sustained() ?? null);
    if (lateMs !== null)
      return sendOverloaded(
        request,
        reply,
        `its event loop runs ${Math.round(lateMs)} ms late`,
        EVENT_LOOP_RETRY_SECONDS,
      );
    request.deadline = performance.now() + settings.deadlineMs;
    const task = request.routeOptions.config.heavy;
    const refusal = task && request.server.heavy.refusal(task, request.deadline);
    if (refusal) return sendOverloaded(request, reply, refusal.reason, refusal.seconds);
    // Counted against the pool's depth from here until the response ends (sent, or the client gone).
    const leave = task ? request.server.heavy.arrive?.() : undefined;
    if (leave) reply.raw.once("close", leave);
    done();
  });
}

/**
 * The event loop counts as overloaded only when it ran late over each of the last two samples. Requests
 * queueing keep the loop late sample after sample; one long callback (a start-up step, a large zone set on
 * a loaded machine) makes one late sample, after which the loop is free again: shedding on that single
 * sample refused the next request for nothing (seen at load 10–15 in CI).
 */
export class EventLoopLateness {
  private previousMs = 0;
  private lastMs = 0;

  constructor(private readonly maxDelayMs: number) {}

  /** One sample's mean delay (ms). */
  push(meanMs: number): void {
    [this.previousMs, this.lastMs] = [this.lastMs, meanMs];
  }

  /** The delay of the last two samples when both were over the limit, else null. */
  sustained(): number | null {
    const late = Math.min(this.previousMs, this.lastMs);
    return late > this.maxDelayMs ? late : null;
  }
}

/** Samples the event loop's mean delay every `sampleIntervalMs` into an EventLoopLateness. */
function measureLateness(app: FastifyInstance, settings: OverloadSettings): EventLoopLateness {
  const lateness = new EventLoopLateness(settings.maxEventLoopDelayMs);
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let sampledAt = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    // This timer is late too when the loop was held. After a long callback the histogram's own timer and
    // this one run in either order, so a sample of a held loop may have no record yet: counted as on
    // time, it broke every pair of late samples while a loop was held callback after callback.
    const ownLateMs = Math.max(0, now - sampledAt - settings.sampleIntervalMs);
    sampledAt = now;
    const meanMs = histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - resolutionMs) : 0;
    lateness.push(Math.max(meanMs, ownLateMs));
    histogram.reset();
  }, settings.sampleIntervalMs);
  timer.unref();
  app.addHook("onClose", async () => {
    clearInterval(timer);
    histogram.disable();
  });
  return lateness;
}

async function registerPressureChecks(app: FastifyInstance, settings: OverloadSettings): Promise<void> {
  await app.register(underPressure, {
    // The delay is EventLoopLateness's, over two samples.
    maxEventLoopDelay: 0,
    maxEventLoopUtilization: settings.maxEventLoopUtilizationPct / 100,
    // Over the last sample, not since the process started (the plugin's default).
    eventLoopUtilizationMode: "interval",
    maxHeapUsedBytes: settings.maxHeapMb * 1024 * 1024,
    sampleInterval: settings.sampleIntervalMs,
    // Answered here, the plugin's hook chain stops (Fastify skips the hooks of a sent reply).
    pressureHandler: (request, reply, type, value) => {
      if (request.routeOptions.config.neverShed) return;
      sendOverloaded(request, reply, pressureReason(type, value), EVENT_LOOP_RETRY_SECONDS);
    },
  });
}

function pressureReason(type: string, value: number | undefined): string {
  const v = value ?? 0;
  if (type === "eventLoopUtilization") return `its event loop is ${Math.round(v * 100)} % busy`;
  if (type === "heapUsedBytes") return `${Math.round(v / 1024 / 1024)} MB of memory in use`;
  return "under pressure";
}
