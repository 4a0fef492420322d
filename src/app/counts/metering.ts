import type { ApiKeyRecord } from "../../domain/records.js";
import type { Store } from "../ports/store.js";
import { fail } from "../../domain/errors.js";

/** Usage and quotas count per calendar month (UTC). */
export interface UsagePeriod {
  start: string;
  end: string;
}

/** The calendar month `month` (YYYY-MM), or the one containing `at`. */
export function monthPeriod(at: Date, month?: string): UsagePeriod {
  if (month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(month))
    throw fail("invalid_month", { month }, "month");
  const [year, m] = month ? month.split("-").map(Number) : [at.getUTCFullYear(), at.getUTCMonth() + 1];
  return {
    start: new Date(Date.UTC(year, m - 1, 1)).toISOString(),
    end: new Date(Date.UTC(year, m, 1)).toISOString(),
  };
}

/** The key a metrics call is charged to. */
export type ChargedKey = Pick<ApiKeyRecord, "id" | "orgId">;

/** A metrics call costs one unit per segment queried per field requested. */
export const unitsOf = (segments: number, fields: number) => segments * fields;

/**
 * 429 when a call of `units` would take the key over its monthly quota.
 * Called with 0 before selecting, to refuse an exhausted key without any work.
 */
export async function assertWithinQuota(
  store: Store,
  key: ChargedKey,
  units: number,
  now: Date,
): Promise<void> {
  const quota = await store.usage.quotaOf(key.id);
  if (quota === null) return;
  const period = monthPeriod(now);
  const used = await store.usage.unitsOfKey(key.id, period.start, period.end);
  if (used + units > quota || (units === 0 && used >= quota))
    throw fail("quota_exceeded", { units, used, quota });
}

/** Units the key may still spend this month, or null when it has no quota. */
export async function quotaLeft(store: Store, key: ChargedKey, now: Date): Promise<number | null> {
  const quota = await store.usage.quotaOf(key.id);
  if (quota === null) return null;
  const period = monthPeriod(now);
  return quota - (await store.usage.unitsOfKey(key.id, period.start, period.end));
}

export async function chargeMetricsCall(
  store: Store,
  key: ChargedKey,
  segments: number,
  fields: number,
  now: Date,
) {
  await store.usage.record({
    keyId: key.id,
    orgId: key.orgId,
    at: now.toISOString(),
    segments,
    fields,
    units: unitsOf(segments, fields),
  });
}

export interface KeyUsage {
  key_id: string;
  prefix: string;
  label: string | null;
  calls: number;
  segments: number;
  fields: number;
  units: number;
  quota_units: number | null;
}

/** Charged usage of every key of an organization in a period (keys without calls show zeros). */
export async function usageReport(store: Store, orgId: string, period: UsagePeriod): Promise<KeyUsage[]> {
  const totals = new Map(
    (await store.usage.totals(orgId, period.start, period.end)).map((t) => [t.keyId, t]),
  );
  const keys = await store.accounts.listKeys(orgId);
  return Promise.all(
    keys.map(async (k) => {
      const t = totals.get(k.id);
      return {
        key_id: k.id,
        prefix: k.prefix,
        label: k.label,
        calls: t?.calls ?? 0,
        segments: t?.segments ?? 0,
        fields: t?.fields ?? 0,
        units: t?.units ?? 0,
        quota_units: await store.usage.quotaOf(k.id),
      };
    }),
  );
}
