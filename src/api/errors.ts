import type { FastifyError, FastifyInstance } from "fastify";
import { Type } from "typebox";
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

function body(code: string, message: string, field?: string): ErrorPayload {
  return { status: "error", error: field ? { code, message, field } : { code, message } };
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

/** Maps every failure to a JSON error body; internal errors never leak a stack trace. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ValidationError) {
      const payload = body(err.code, err.message, err.field);
      payload.error.issues = err.issues;
      return reply.status(err.httpStatus).send(payload);
    }
    if (err instanceof RetryLaterError) reply.header("retry-after", String(err.retryAfterSeconds));
    if (err instanceof DomainError)
      return reply.status(err.httpStatus).send(body(err.code, err.message, err.field));
    if (err.validation) return reply.status(400).send(schemaValidationBody(err));
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
