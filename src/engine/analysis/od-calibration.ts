import type { ObservedTrip } from "./od-aggregate.js";

/**
 * Volume output: one scale factor per device-type group, from the calibration
 * zones (pass-through zones with a counted daily volume). See docs/analyses.md.
 *
 *   factor(g) = Σ calibration volume × share of g   /   Σ index daily traffic of g
 *
 * over the calibration zones that carried index traffic of g.
 */
export interface CalibrationZone {
  /** The zone's side and index in the compiled origin or destination set. */
  side: "origin" | "destination";
  zone: number;
  name: string;
  /** Counted daily volume of all vehicles. */
  volume: number;
  /** ADT/AADT count every day; AWDT/AADWT count Monday to Friday. */
  days: "all" | "weekdays";
  /** Share of the volume in each device-type group (index = group). */
  groupShares: readonly number[];
}

/** Index traffic of each calibration zone and group, on the days its calibration type counts. */
export class CalibrationCounter {
  /** counts[k][g]: weighted trips of group g through calibration zone k. */
  private readonly counts: Float64Array[];

  constructor(
    readonly zones: readonly CalibrationZone[],
    groupCount: number,
  ) {
    this.counts = zones.map(() => new Float64Array(groupCount));
  }

  add(seen: ObservedTrip): void {
    const weekday = seen.weekday <= 5;
    this.zones.forEach((z, k) => {
      if (z.days === "weekdays" && !weekday) return;
      const visits = z.side === "origin" ? seen.origins : seen.destinations;
      if (!visits.some((v) => v.zone === z.zone)) return;
      for (const g of seen.trip.groups) this.counts[k][g] += seen.trip.weight;
    });
  }

  /** The counts as plain data, to be added to another counter of the same zones (analysis shards). */
  exportState(): Float64Array[] {
    return this.counts.map((c) => c.slice());
  }

  absorb(state: readonly Float64Array[]): void {
    state.forEach((counts, k) => counts.forEach((v, g) => (this.counts[k][g] += v)));
  }

  /**
   * Scale factor of each group. `dayCount` gives the analysed days of each kind
   * (the divisor of the daily index traffic). A group no calibration zone saw
   * takes the all-vehicle factor; null when no calibration zone saw any trip.
   */
  factors(dayCount: { all: number; weekdays: number }): number[] | null {
    const groups = this.counts[0]?.length ?? 0;
    const factorOf = (g: number): number | null => {
      let volume = 0;
      let index = 0;
      this.zones.forEach((z, k) => {
        const days = dayCount[z.days];
        if (days === 0 || this.counts[k][g] === 0) return;
        volume += z.volume * z.groupShares[g];
        index += this.counts[k][g] / days;
      });
      return index > 0 ? volume / index : null;
    };
    const all = factorOf(0);
    if (all === null) return null;
    return Array.from({ length: groups }, (_, g) => (g === 0 ? all : (factorOf(g) ?? all)));
  }
}
