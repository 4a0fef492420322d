import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { logRequestLine } from "./logging.js";
import { DomainError, RetryLaterError, ValidationError, fail } from "../domain/errors.js";
import { ERROR_CATALOGUE, errorMessage } from "../domain/error-catalogue.js";

/** The one error body every failing request gets. */
export const ErrorBody = Type.Object(
  {
    status: Type.Literal("error"),
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      field: Type.Optional(Type.String()),
      issues: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    }),
  },
  { $id: "ErrorBody", description: "Every 4xx/5xx response" },
);

interface ErrorPayload {
  status: "error";
  error: { code: string; message: string; field?: string; issues?: { field: string; message: string }[] };
}

/**
 * Clients format error messages as templates (`{name}` is a placeholder there), so no message carries a
 * brace: the catalogue is written without them, and a brace a user value brings in becomes a parenthesis.
 */
export const braceless = (message: string) => message.replace(/\{/g, "(").replace(/\}/g, ")");

function body(code: string, message: string, field?: string): ErrorPayload {
  const text = braceless(message);
  return { status: "error", error: field ? { code, message: text, field } : { code, message: text } };
}

/**
 * 503 `overloaded` with Retry-After, sent without raising an error (no stack trace to capture): the cheap
 * path of shedding, taken in onRequest hooks. The request is marked so that it is tallied, not logged alone.
 */
export function sendOverloaded(
  request: FastifyRequest,
  reply: FastifyReply,
  reason: string,
  seconds: number,
): void {
  request.shed = true;
  void reply
    .status(ERROR_CATALOGUE.overloaded.status)
    .header("retry-after", String(seconds))
    .send(body("overloaded", errorMessage("overloaded", { reason, seconds })));
}

/** The status and body of a catalogue error. */
function answer(err: DomainError): [number, ErrorPayload] {
  return [err.httpStatus, body(err.code, err.message, err.field)];
}

/** `/zones/0/properties/name` → `zones[0].properties.name` */
function fieldFromPath(path: string, missing?: string): string | undefined {
  const parts = path.split("/").filter(Boolean);
  if (missing) parts.push(missing);
  if (parts.length === 0) return undefined;
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

function schemaValidationBody(err: FastifyError): ErrorPayload {
  const first = err.validation![0];
  const params = first.params as { missingProperty?: string; additionalProperty?: string };
  const field = fieldFromPath(first.instancePath, params.missingProperty ?? params.additionalProperty);
  const where = err.validationContext === "body" ? "" : `${err.validationContext} `;
  const reason = `${where}${field ?? err.validationContext ?? "request"} ${first.message ?? "is invalid"}`;
  return answer(fail("invalid_request", { reason }, field))[1];
}

/** Fastify's own request errors, under Streetflow's catalogue codes. */
const FRAMEWORK_ERRORS: Record<string, () => DomainError> = {
  FST_ERR_BAD_URL: () => fail("invalid_url", { reason: "the URL path has an invalid percent-encoding" }),
  FST_ERR_MAX_PARAM_LENGTH: () => fail("path_parameter_too_long"),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => fail("unsupported_media_type"),
  FST_ERR_CTP_BODY_TOO_LARGE: () => fail("body_too_large"),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    fail("invalid_json", { reason: "the body is empty but its content type is JSON" }),
  FST_ERR_CTP_INVALID_JSON_BODY: () => fail("invalid_json", { reason: "the body is not valid JSON" }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => fail("invalid_content_length"),
};

/** A client error Fastify raises itself, in the documented shape; undefined when it is not one of ours. */
function frameworkErrorBody(err: FastifyError): [number, ErrorPayload] | undefined {
  const known = err.code ? FRAMEWORK_ERRORS[err.code] : undefined;
  if (known) return answer(known());
  // The JSON parser raises a SyntaxError with status 400 and no code.
  if (err instanceof SyntaxError && err.statusCode === 400)
    return answer(fail("invalid_json", { reason: `the body is not valid JSON: ${err.message}` }));
  return undefined;
}

/** Errors raised before routing (bad URL encoding, over-long path parameter). */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const [status, payload] =
    frameworkErrorBody(err) ?? answer(fail("invalid_request", { reason: err.message }));
  void reply.status(status).send(payload);
  // Fastify writes no completion line for requests that never reached routing.
  logRequestLine(request, reply);
}

/**
 * Errors of the HTTP parser, before Fastify sees a request (headers or query string too large). The
 * socket cannot be reused after such an error, so the response says `Connection: close` instead of the
 * connection silently disappearing under the client's next request.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const [status, payload] = answer(
    err.code === "HPE_HEADER_OVERFLOW"
      ? fail("headers_too_large")
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? fail("request_timeout")
        : fail("invalid_request", { reason: "the request is not valid HTTP" }),
  );
  const json = JSON.stringify(payload);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    );
  socket.destroy();
}

/** Maps every failure to a JSON error body; internal errors never leak a stack trace. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ValidationError) {
      const payload = body(err.code, err.message, err.field);
      payload.error.issues = err.issues.map((i) => ({ field: i.field, message: braceless(i.message) }));
      return reply.status(err.httpStatus).send(payload);
    }
    if (err instanceof RetryLaterError) reply.header("retry-after", String(err.retryAfterSeconds));
    if (err instanceof DomainError) return reply.status(err.httpStatus).send(answer(err)[1]);
    if (err.validation) return reply.status(400).send(schemaValidationBody(err));
    const framework = frameworkErrorBody(err);
    if (framework) return reply.status(framework[0]).send(framework[1]);
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Another client error of Fastify or a plugin: its own code, which the catalogue does not list.
      if (!err.code)
        return reply.status(status).send(answer(fail("bad_request", { reason: err.message }))[1]);
      return reply.status(status).send(body(err.code.replace(/^FST_ERR_/, "").toLowerCase(), err.message));
    }
    request.log.error({ err }, "unhandled error");
    return reply.status(500).send(answer(fail("internal_error"))[1]);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(answer(fail("not_found", { method: request.method, path: request.url.split("?")[0] }))[1]),
  );
}
