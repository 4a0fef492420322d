/**
 * Sample expansion: how many trips one observed trip stands for. The one
 * method every count in Streetflow uses (segment counts and zone analyses
 * alike), so numbers from the two interfaces agree:
 *
 *   factor(month) = INDEX_PANEL / distinct devices observed in that month
 *
 * An expanded daily value is then the month's sample trips per day × factor:
 * the trips a panel of INDEX_PANEL devices would make. It stays stable when
 * the sample grows or shrinks from month to month, which raw sample counts do
 * not. A month with no device tally (aggregates loaded without trips) keeps
 * factor 1: counts as observed.
 */
export const INDEX_PANEL = 10_000;

export function expansionFactor(devices: number | undefined): number {
  return devices && devices > 0 ? INDEX_PANEL / devices : 1;
}

/** Factor per month (YYYY-MM) from the store's device tallies. */
export function monthlyExpansion(devicesByMonth: Map<string, number>): (month: string) => number {
  return (month) => expansionFactor(devicesByMonth.get(month));
}
