import { ERROR_CATALOGUE, errorMessage, type ErrorCode, type ErrorParams } from "./error-catalogue.js";

export type { ErrorCode } from "./error-catalogue.js";

/**
 * A failure the caller can act on. The HTTP layer turns it into
 * `{status: "error", error: {code, message, field?}}` with `httpStatus`.
 */
export class DomainError extends Error {
  readonly httpStatus: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "DomainError";
    this.httpStatus = ERROR_CATALOGUE[code].status;
  }
}

/** The parameters `fail` takes after the code: the template's values (none for a fixed message), then the field. */
type FailArgs<C extends ErrorCode> = [keyof ErrorParams<C>] extends [never]
  ? [params?: ErrorParams<C>, field?: string]
  : [params: ErrorParams<C>, field?: string];

/**
 * The error of catalogue `code` (status and message from `src/domain/error-catalogue.ts`), with `field`
 * naming the offending field: `throw fail("unknown_country", { country }, "country")`.
 */
export function fail<C extends ErrorCode>(code: C, ...[params, field]: FailArgs<C>): DomainError {
  return new DomainError(code, errorMessage(code, (params ?? {}) as ErrorParams<C>), field);
}

/** One problem of a multi-field validation, e.g. a zone property. */
export interface Issue {
  field: string;
  message: string;
}

/** Collects every problem of a body so one response lists them all. */
export class ValidationError extends DomainError {
  constructor(readonly issues: Issue[]) {
    super(
      "validation_failed",
      errorMessage("validation_failed", { issues: issues.map((i) => `${i.field}: ${i.message}`).join("; ") }),
      issues[0]?.field,
    );
  }
}

/** A refusal the caller may retry after a while (rate limits, sign-in throttling): the HTTP layer adds Retry-After. */
export class RetryLaterError extends DomainError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, message);
  }
}

/** The error of catalogue `code`, to be retried after `seconds`. */
export function retryLater<
  C extends
    | "rate_limited"
    | "sign_in_throttled"
    | "sign_in_locked"
    | "key_busy"
    | "overloaded"
    | "time_limit_exceeded",
>(code: C, params: ErrorParams<C>, seconds: number): RetryLaterError {
  return new RetryLaterError(code, errorMessage(code, params), seconds);
}
