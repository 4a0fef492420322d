import type { FastifyInstance, FastifyRequest } from "fastify";
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
 * refusal costs next to nothing. First @fastify/under-pressure answers every route but `/healthz` with
 * 503 `overloaded` while the event loop is measured too busy (delay, utilisation, heap); then each
 * request gets its deadline, and a heavy route is refused at once when the pool could not answer it by
 * then (the pool checks again, with the key's share, when the work is submitted). An admitted heavy
 * request counts against the pool's depth from then on, before it reaches the pool.
 */
export async function registerLoadShedding(app: FastifyInstance, settings: OverloadSettings): Promise<void> {
  const { maxEventLoopDelayMs, maxEventLoopUtilizationPct, maxHeapMb } = settings;
  if (maxEventLoopDelayMs + maxEventLoopUtilizationPct + maxHeapMb > 0)
    await registerPressureChecks(app, settings);
  app.decorateRequest("deadline", Infinity);
  app.decorateRequest("shed", false);
  // A callback hook: answering without calling `done` ends the request here (Fastify's early response).
  app.addHook("onRequest", (request, reply, done) => {
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

async function registerPressureChecks(app: FastifyInstance, settings: OverloadSettings): Promise<void> {
  await app.register(underPressure, {
    maxEventLoopDelay: settings.maxEventLoopDelayMs,
    maxEventLoopUtilization: settings.maxEventLoopUtilizationPct / 100,
    // Over the last sample, not since the process started (the plugin's default).
    eventLoopUtilizationMode: "interval",
    maxHeapUsedBytes: settings.maxHeapMb * 1024 * 1024,
    sampleInterval: settings.sampleIntervalMs,
    // Answered here, the plugin's hook chain stops (Fastify skips the hooks of a sent reply).
    pressureHandler: (request, reply, type, value) => {
      if (request.routeOptions.config.neverShed) return;
      // No delay sample at all (the plugin says Infinity) means one callback held the loop for the whole
      // sample — start-up work, or one long task — and the loop is free now: not requests queueing.
      if (type === "eventLoopDelay" && !Number.isFinite(value)) return;
      sendOverloaded(request, reply, pressureReason(type, value), EVENT_LOOP_RETRY_SECONDS);
    },
  });
}

function pressureReason(type: string, value: number | undefined): string {
  const v = value ?? 0;
  if (type === "eventLoopDelay") return `its event loop runs ${Math.round(v)} ms late`;
  if (type === "eventLoopUtilization") return `its event loop is ${Math.round(v * 100)} % busy`;
  if (type === "heapUsedBytes") return `${Math.round(v / 1024 / 1024)} MB of memory in use`;
  return "under pressure";
}
