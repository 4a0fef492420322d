import type { ObservedTrip } from "./od-aggregate.js";

/**
 * Per zone: the trips that start, end or pass in it, each trip once however
 * many of its visits or pairs touch the zone. Zones are numbered origins first,
 * then destinations (when the sides are different sets). Only trips of `group`
 * count. Feeds zone_counts (expanded, per day type and day part) and the
 * coverage review (raw sample over all analysed days).
 */
export class ZoneTally {
  private readonly sample: number[];
  private readonly weights = new Map<number, number>();

  constructor(
    private readonly originCount: number,
    destinationCount: number,
    private readonly same: boolean,
    private readonly dayParts: number,
    private readonly group = 0,
  ) {
    this.sample = new Array<number>(same ? originCount : originCount + destinationCount).fill(0);
  }

  get zoneCount(): number {
    return this.sample.length;
  }

  add(seen: ObservedTrip): void {
    if (!seen.trip.groups.includes(this.group)) return;
    const zones = new Set<number>(seen.origins.map((v) => v.zone));
    const offset = this.same ? 0 : this.originCount;
    for (const v of seen.destinations) zones.add(offset + v.zone);
    for (const zone of zones) {
      this.sample[zone]++;
      for (const dt of seen.dayTypes)
        for (const dp of seen.dayParts) {
          const key = (dt * this.dayParts + dp) * this.sample.length + zone;
          this.weights.set(key, (this.weights.get(key) ?? 0) + seen.trip.weight);
        }
    }
  }

  /** Sampled trips of the zone over every analysed day. */
  sampleOf(zone: number): number {
    return this.sample[zone];
  }

  /** Expanded trips of the zone in a day type and part, summed over the analysed days. */
  weightOf(zone: number, dayType: number, dayPart: number): number {
    return this.weights.get((dayType * this.dayParts + dayPart) * this.sample.length + zone) ?? 0;
  }
}
