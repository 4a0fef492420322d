import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from "fastify";

/** Where log lines go in tests; the server logs to stdout. */
export interface LogSink {
  write(line: string): void;
}

/** A `key=` (API key) or `token=` (one-time reset link) value, wherever it appears in a URL. */
const KEY_IN_URL = /([?&](?:key|token)=)[^&#]*/gi;

/** The URL with any API key replaced, so it can be logged. */
export function redactUrl(url: string): string {
  return url.replace(KEY_IN_URL, "$1[redacted]");
}

/**
 * Fastify's request lines, replaced: none when a request comes in, and one when it completes with
 * method, route (the pattern, never the key-bearing URL), status and time; pino adds `reqId`.
 */
class OneLinePerRequest extends LogController {
  private shed = 0;

  override incomingRequest(): void {}
  override routeNotFound(): void {}
  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (request.shed) this.tallyShed(request);
    else logRequestLine(request, reply, error);
  }

  /**
   * Requests shed under overload come by the thousand a second: one line per SHED_TALLY_MS counts them,
   * so logging does not add to the load it reports.
   */
  private tallyShed(request: FastifyRequest): void {
    if (this.shed++ > 0) return;
    const log = request.server.log;
    setTimeout(() => {
      log.warn({ shed: this.shed, seconds: SHED_TALLY_MS / 1000 }, "requests shed (503 overloaded)");
      this.shed = 0;
    }, SHED_TALLY_MS).unref();
  }
}

/** How often the count of shed requests is logged while requests are shed. */
const SHED_TALLY_MS = 10_000;

/** The request's one log line; also called for requests Fastify rejects before routing. */
export function logRequestLine(request: FastifyRequest, reply: FastifyReply, error?: Error | null): void {
  const line = {
    method: request.method,
    route: request.routeOptions?.url ?? redactUrl(request.url.split("?")[0]),
    status: reply.statusCode,
    ms: Math.round(reply.elapsedTime * 10) / 10,
  };
  if (error) reply.log.error({ ...line, err: error }, "request failed");
  else reply.log.info(line, "request");
}

/**
 * pino through Fastify's logger, one line per request (see `OneLinePerRequest`). `redact` and the
 * `req` serializer are the safety net for anything else that logs a request or its headers.
 */
export function loggerOptions(
  enabled: boolean,
  sink?: LogSink,
): Pick<FastifyServerOptions, "logger" | "logController"> {
  if (!enabled && !sink) return { logger: false };
  return {
    logController: new OneLinePerRequest(),
    logger: {
      level: "info",
      ...(sink ? { stream: sink } : {}),
      redact: {
        paths: [
          'req.headers["x-stl-key"]',
          'req.headers["x-service-key"]',
          "req.headers.authorization",
          "req.headers.cookie",
          'req.headers["x-csrf-token"]',
          "req.query.key",
        ],
        censor: "[redacted]",
      },
      serializers: {
        req: (req: { method: string; url: string }) => ({ method: req.method, url: redactUrl(req.url) }),
      },
    },
  };
}
