/**
 * A failure the caller can act on. The HTTP layer turns it into
 * `{status: "error", error: {code, message, field?}}` with `httpStatus`.
 */
export class DomainError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const badRequest = (code: string, message: string, field?: string) =>
  new DomainError(400, code, message, field);
export const notFound = (code: string, message: string, field?: string) =>
  new DomainError(404, code, message, field);
export const conflict = (code: string, message: string, field?: string) =>
  new DomainError(409, code, message, field);
export const forbidden = (code: string, message: string, field?: string) =>
  new DomainError(403, code, message, field);
export const unauthorized = (message: string) => new DomainError(401, "unauthorized", message);

/** One problem of a multi-field validation, e.g. a zone property. */
export interface Issue {
  field: string;
  message: string;
}

/** Collects every problem of a body so one response lists them all. */
export class ValidationError extends DomainError {
  constructor(readonly issues: Issue[]) {
    super(
      400,
      "validation_failed",
      issues.map((i) => `${i.field}: ${i.message}`).join("; "),
      issues[0]?.field,
    );
  }
}

/** A refusal the caller may retry after a while (rate limits, sign-in throttling): the HTTP layer adds Retry-After. */
export class RetryLaterError extends DomainError {
  constructor(
    httpStatus: number,
    code: string,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(httpStatus, code, message);
  }
}
