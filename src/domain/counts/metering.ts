import type { ApiKeyRecord, Store } from "../../store/types.js";
import { DomainError } from "../errors.js";

/** Usage and quotas count per calendar month (UTC). */
export interface UsagePeriod {
  start: string;
  end: string;
}

export function monthPeriod(at: Date, month?: string): UsagePeriod {
  const [year, m] = month ? month.split("-").map(Number) : [at.getUTCFullYear(), at.getUTCMonth() + 1];
  return {
    start: new Date(Date.UTC(year, m - 1, 1)).toISOString(),
    end: new Date(Date.UTC(year, m, 1)).toISOString(),
  };
}

/** A metrics call costs one unit per segment queried per field requested. */
export const unitsOf = (segments: number, fields: number) => segments * fields;

/**
 * 429 when a call of `units` would take the key over its monthly quota.
 * Called with 0 before selecting, to refuse an exhausted key without any work.
 */
export function assertWithinQuota(store: Store, key: ApiKeyRecord, units: number, now: Date): void {
  const quota = store.usage.quotaOf(key.id);
  if (quota === null) return;
  const period = monthPeriod(now);
  const used = store.usage.unitsOfKey(key.id, period.start, period.end);
  if (used + units > quota || (units === 0 && used >= quota))
    throw new DomainError(
      429,
      "quota_exceeded",
      `this call needs ${units} units; the key has used ${used} of its ${quota} units this month`,
    );
}

export function chargeMetricsCall(
  store: Store,
  key: ApiKeyRecord,
  segments: number,
  fields: number,
  now: Date,
) {
  store.usage.record({
    keyId: key.id,
    orgId: key.orgId,
    at: now.toISOString(),
    segments,
    fields,
    units: unitsOf(segments, fields),
  });
}
