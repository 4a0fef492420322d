import { DomainError, ValidationError, type ErrorCode, type Issue } from "../../domain/errors.js";
import { isErrorCode } from "../../domain/error-catalogue.js";
import { toDomainError } from "../error-mapping.js";

/**
 * A task's failure as it crosses from a worker thread: structured cloning keeps an Error's message but
 * not its class, so catalogue errors travel as their code, message and field, and come back as the same
 * DomainError (same status and body as inline). Anything else stays an internal error.
 */
export type WireError =
  | { kind: "domain"; code: ErrorCode; message: string; field?: string; issues?: Issue[] }
  | { kind: "internal"; message: string; stack?: string };

export function errorToWire(err: unknown): WireError {
  const domain = toDomainError(err);
  if (domain instanceof DomainError) {
    const issues = domain instanceof ValidationError ? domain.issues : undefined;
    return { kind: "domain", code: domain.code, message: domain.message, field: domain.field, issues };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: "internal", message: e.message, stack: e.stack };
}

export function errorFromWire(wire: WireError): Error {
  if (wire.kind === "domain" && isErrorCode(wire.code))
    return wire.issues
      ? new ValidationError(wire.issues)
      : new DomainError(wire.code, wire.message, wire.field);
  const err = new Error(wire.message);
  if (wire.kind === "internal" && wire.stack) err.stack = wire.stack;
  return err;
}

/**
 * A task's state in the Int32Array its pool and its thread share: queued, then started by a thread; then
 * either the thread claims the answer (its writes commit, the pool waits for them) or the pool abandons it
 * at its deadline (answered 503: the thread's writes roll back). Whichever comes first wins.
 */
export const TASK_STATE = { queued: 0, started: 1, claimed: 2, abandoned: 3 } as const;

/** The thread's claim of the answer: true unless the pool abandoned the task first. */
export const claimAnswer = (state: Int32Array) =>
  Atomics.compareExchange(state, 0, TASK_STATE.started, TASK_STATE.claimed) === TASK_STATE.started;

/** Why a task abandoned at its deadline is answered 503, by the pool or by the thread that lost the race. */
export const PAST_DEADLINE = "its answer was not ready by its deadline";

/** The pool's giving up of a task at its deadline: true unless the thread claimed its answer first. */
export const abandonTask = (state: Int32Array) =>
  Atomics.compareExchange(state, 0, TASK_STATE.started, TASK_STATE.abandoned) === TASK_STATE.started;
