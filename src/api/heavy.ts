import type { FastifyRequest } from "fastify";
import { retryLater } from "../domain/errors.js";

/**
 * onRequest hook of the heavy routes: when the pool is full, answer 503 `overloaded` before the body is
 * read or parsed, so shedding costs next to nothing (the pool checks again, per key, when the work is
 * submitted).
 */
export async function shedWhenSaturated(request: FastifyRequest): Promise<void> {
  if (request.server.heavy.saturated())
    throw retryLater("overloaded", { reason: "heavy requests fill the queue", seconds: 2 }, 2);
}
