import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { logRequestLine } from "./logging.js";
import { DomainError, RetryLaterError, ValidationError } from "../domain/errors.js";

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
  const message = `${where}${field ?? err.validationContext ?? "request"} ${first.message ?? "is invalid"}`;
  return body("invalid_request", message, field);
}

/** Fastify's own request errors, under Streetflow's codes (status, code, message). */
const FRAMEWORK_ERRORS: Record<string, [number, string, string]> = {
  FST_ERR_BAD_URL: [400, "invalid_url", "the URL path has an invalid percent-encoding"],
  FST_ERR_MAX_PARAM_LENGTH: [
    414,
    "path_parameter_too_long",
    "a path parameter is longer than 100 characters",
  ],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, "unsupported_media_type", "the body must be application/json"],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, "body_too_large", "the body is larger than this route accepts"],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, "invalid_json", "the body is empty but its content type is JSON"],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, "invalid_json", "the body is not valid JSON"],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [
    400,
    "invalid_content_length",
    "Content-Length does not match the body",
  ],
};

/** A client error Fastify raises itself, in the documented shape; undefined when it is not one of ours. */
function frameworkErrorBody(err: FastifyError): [number, ErrorPayload] | undefined {
  const known = err.code ? FRAMEWORK_ERRORS[err.code] : undefined;
  if (known) return [known[0], body(known[1], known[2])];
  // The JSON parser raises a SyntaxError with status 400 and no code.
  if (err instanceof SyntaxError && err.statusCode === 400)
    return [400, body("invalid_json", `the body is not valid JSON: ${err.message}`)];
  return undefined;
}

/** Errors raised before routing (bad URL encoding, over-long path parameter). */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const [status, payload] = frameworkErrorBody(err) ?? [400, body("invalid_request", err.message)];
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
  const [status, payload] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, body("headers_too_large", "the request line and headers exceed the 16 kB limit")]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, body("request_timeout", "the request was not received in time")]
        : [400, body("invalid_request", "the request is not valid HTTP")];
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
    if (err instanceof DomainError)
      return reply.status(err.httpStatus).send(body(err.code, err.message, err.field));
    if (err.validation) return reply.status(400).send(schemaValidationBody(err));
    const framework = frameworkErrorBody(err);
    if (framework) return reply.status(framework[0]).send(framework[1]);
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = (err.code ?? "bad_request").replace(/^FST_ERR_/, "").toLowerCase();
      return reply.status(status).send(body(code, err.message));
    }
    request.log.error({ err }, "unhandled error");
    return reply.status(500).send(body("internal_error", "the server failed to handle this request"));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(body("not_found", `no route ${request.method} ${request.url.split("?")[0]}`)),
  );
}
