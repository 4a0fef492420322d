import type { FastifyRequest } from "fastify";
import { retryLater } from "../domain/errors.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route's work runs on the heavy-request pool (src/app/heavy/tasks.ts): shed when it is full. */
    heavy?: boolean;
  }
}

/** Route config of the routes whose work is a heavy task. */
export const HEAVY_ROUTE = { heavy: true } as const;

/**
 * A root onRequest hook, so it runs before authentication: when the pool is full, a heavy route answers
 * 503 `overloaded` before any store look-up or body parsing, so shedding costs next to nothing (the pool
 * checks again, and the key's share, when the work is submitted).
 */
export async function shedWhenSaturated(request: FastifyRequest): Promise<void> {
  if (request.routeOptions.config.heavy && request.server.heavy.saturated())
    throw retryLater("overloaded", { reason: "heavy requests fill the queue", seconds: 2 }, 2);
}
