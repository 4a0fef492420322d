/**
 * Annual average daily traffic by the AASHTO method: the traffic of each (month, day of week) is
 * averaged over that month's days of that weekday with data, each month's average daily traffic is the
 * mean of its weekdays' averages, and the AADT the mean of the months'. Days without data so weigh
 * nothing, and an uneven spread of data days over weekdays and months does not bias the result.
 * The factors relate the AADT to a month's or a weekday's average: AADT = factor × average.
 */
export interface AadtResult {
  aadt: number;
  /** Average daily traffic per month 1..12 (index 0 unused); null for a month without data. */
  monthly: (number | null)[];
  /** Average daily traffic per ISO weekday 1..7 over the months with data (index 0 unused). */
  weekday: (number | null)[];
  monthFactors: (number | null)[];
  weekdayFactors: (number | null)[];
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

export class AadtTally {
  /** Summed weight per (zone, group, month, weekday): index ((zone × groups + group) × 13 + month) × 8 + weekday. */
  private readonly sums: Float64Array;

  constructor(
    private readonly zones: number,
    private readonly groups: number,
  ) {
    this.sums = new Float64Array(zones * groups * 13 * 8);
  }

  private at(zone: number, group: number, month: number, weekday: number): number {
    return ((zone * this.groups + group) * 13 + month) * 8 + weekday;
  }

  add(zone: number, group: number, month: number, weekday: number, weight: number): void {
    this.sums[this.at(zone, group, month, weekday)] += weight;
  }

  /**
   * The zone's AADT for a group. `dataDays[month][weekday]` counts the year's days with stored data of
   * each month (1..12) and ISO weekday (1..7).
   */
  result(zone: number, group: number, dataDays: readonly (readonly number[])[]): AadtResult {
    const madw = (m: number, w: number) =>
      dataDays[m][w] > 0 ? this.sums[this.at(zone, group, m, w)] / dataDays[m][w] : null;
    const months = Array.from({ length: 13 }, (_, m) => m);
    const weekdays = [1, 2, 3, 4, 5, 6, 7];
    const monthly = months.map((m) =>
      m === 0 ? null : mean(weekdays.map((w) => madw(m, w)).filter((v): v is number => v !== null)),
    );
    const aadt = mean(monthly.filter((v): v is number => v !== null)) ?? 0;
    const weekday = [0, ...weekdays].map((w) =>
      w === 0
        ? null
        : mean(
            months
              .slice(1)
              .map((m) => madw(m, w))
              .filter((v): v is number => v !== null),
          ),
    );
    const factor = (avg: number | null) => (avg === null || avg === 0 ? null : aadt / avg);
    return {
      aadt,
      monthly,
      weekday,
      monthFactors: monthly.map(factor),
      weekdayFactors: weekday.map(factor),
    };
  }
}
