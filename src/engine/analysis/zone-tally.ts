import type { ObservedTrip, TripVisits, VisitSink } from "./od-aggregate.js";
import { VisitList } from "../zones/lookup.js";

/**
 * Per zone: the trips that start, end or pass in it, each trip once however
 * many of its visits or pairs touch the zone. Zones are numbered origins first,
 * then destinations (when the sides are different sets). Only trips of `group`
 * count. Feeds zone_counts (expanded, per day type and day part) and the
 * coverage review (raw sample over all analysed days).
 */
export class ZoneTally implements VisitSink {
  private readonly sample: Float64Array;
  /** Dense: (dayType × dayParts + dayPart) × zones + zone, grown as day types appear. */
  private weights = new Float64Array(0);
  /** The trip that last counted each zone, so a zone counts once per trip. */
  private readonly countedAt: Int32Array;
  private trip = 0;

  constructor(
    private readonly originCount: number,
    destinationCount: number,
    private readonly same: boolean,
    private readonly dayParts: number,
    private readonly group = 0,
  ) {
    const zones = same ? originCount : originCount + destinationCount;
    this.sample = new Float64Array(zones);
    this.countedAt = new Int32Array(zones);
  }

  get zoneCount(): number {
    return this.sample.length;
  }

  add(seen: ObservedTrip): void {
    const list = (visits: { zone: number }[]) => {
      const out = new VisitList();
      for (const v of visits) out.push(v.zone, 0);
      return out;
    };
    this.addVisits({ ...seen, origins: list(seen.origins), destinations: list(seen.destinations) });
  }

  addVisits(seen: TripVisits): void {
    if (!seen.trip.groups.includes(this.group)) return;
    const trip = ++this.trip;
    const offset = this.same ? 0 : this.originCount;
    const { origins, destinations } = seen;
    for (let i = 0; i < origins.count; i++) this.count(origins.zones[i], trip, seen);
    for (let i = 0; i < destinations.count; i++) this.count(offset + destinations.zones[i], trip, seen);
  }

  private count(zone: number, trip: number, seen: TripVisits): void {
    if (this.countedAt[zone] === trip) return;
    this.countedAt[zone] = trip;
    this.sample[zone]++;
    const zones = this.sample.length;
    for (const dt of seen.dayTypes) {
      if ((dt + 1) * this.dayParts * zones > this.weights.length) this.grow(dt + 1);
      for (const dp of seen.dayParts)
        this.weights[(dt * this.dayParts + dp) * zones + zone] += seen.trip.weight;
    }
  }

  private grow(dayTypes: number): void {
    const weights = new Float64Array(dayTypes * this.dayParts * this.sample.length);
    weights.set(this.weights);
    this.weights = weights;
  }

  /** The tallies as plain data, to be added to another tally of the same zones (analysis shards). */
  exportState(): { sample: Float64Array; weights: Float64Array } {
    return { sample: this.sample.slice(), weights: this.weights.slice() };
  }

  /** Adds another tally's exported state to this one. */
  absorb(state: { sample: Float64Array; weights: Float64Array }): void {
    for (let z = 0; z < this.sample.length; z++) this.sample[z] += state.sample[z];
    if (state.weights.length > this.weights.length)
      this.grow(state.weights.length / (this.dayParts * this.sample.length));
    for (let i = 0; i < state.weights.length; i++) this.weights[i] += state.weights[i];
  }

  /** Sampled trips of the zone over every analysed day. */
  sampleOf(zone: number): number {
    return this.sample[zone];
  }

  /** Expanded trips of the zone in a day type and part, summed over the analysed days. */
  weightOf(zone: number, dayType: number, dayPart: number): number {
    return this.weights[(dayType * this.dayParts + dayPart) * this.sample.length + zone] ?? 0;
  }
}
