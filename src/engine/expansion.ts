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

/** The grid expansion weights are put on: 2^-20 (below a millionth of a trip). */
const WEIGHT_GRID = 2 ** 20;

/**
 * A weight rounded to a multiple of 2^-20. Sums of such weights are exact in float64 while below 2^33
 * (8.6 billion expanded trips per cell), so they do not depend on the order trips are added in: an
 * analysis split into shards sums, merged, to the very bits of one pass over all its trips.
 */
export function onWeightGrid(weight: number): number {
  return Math.round(weight * WEIGHT_GRID) / WEIGHT_GRID;
}
