import type { FailureRecord } from "../../domain/records.js";
import type { Store } from "../ports/store.js";
import { retryLater } from "../../domain/errors.js";
import type { LockoutPolicy } from "../../domain/security/policy.js";

export const accountSubject = (email: string) => `account:${email.trim().toLowerCase()}`;
export const ipSubject = (ip: string) => `ip:${ip}`;

/** Milliseconds the subject must still wait before its next attempt (0: it may try now). */
export function waitMs(record: FailureRecord | null, policy: LockoutPolicy, now: Date): number {
  if (!record) return 0;
  const t = now.getTime();
  if (record.lockedUntil) return Math.max(0, Date.parse(record.lockedUntil) - t);
  if (t - Date.parse(record.lastFailureAt) > policy.windowMs) return 0;
  const over = record.failures - policy.freeFailures;
  if (over < 0) return 0;
  const delay = Math.min(policy.firstDelayMs * 2 ** over, policy.maxDelayMs);
  return Math.max(0, Date.parse(record.lastFailureAt) + delay - t);
}

/** 429 with Retry-After while the subject is slowed down or locked. */
export async function assertMayTry(
  store: Store,
  subject: string,
  policy: LockoutPolicy,
  now: Date,
): Promise<void> {
  const record = await store.security.failuresOf(subject);
  const wait = waitMs(record, policy, now);
  if (wait === 0) return;
  const seconds = Math.ceil(wait / 1000);
  const locked = record?.lockedUntil != null;
  throw retryLater(locked ? "sign_in_locked" : "sign_in_throttled", { seconds }, seconds);
}

export async function recordFailure(
  store: Store,
  subject: string,
  policy: LockoutPolicy,
  now: Date,
): Promise<void> {
  const previous = await store.security.failuresOf(subject);
  const expired =
    !previous ||
    (previous.lockedUntil !== null && Date.parse(previous.lockedUntil) <= now.getTime()) ||
    now.getTime() - Date.parse(previous.lastFailureAt) > policy.windowMs;
  const failures = expired ? 1 : previous.failures + 1;
  const lockedUntil =
    failures >= policy.lockAfter ? new Date(now.getTime() + policy.lockMs).toISOString() : null;
  await store.security.saveFailures(subject, { failures, lastFailureAt: now.toISOString(), lockedUntil });
}
