import { hash } from "node:crypto";
import { TripColumnsBuilder, type TripColumns } from "./columns.js";
import type { MatchedTrip } from "./types.js";

/** Identity of a trip across re-runs of the same input: device, start, end and source. */
export function fingerprintOf(t: MatchedTrip): Buffer {
  return sha256(`${t.deviceId}\u0000${t.startT}\u0000${t.endT}\u0000${t.source}`).subarray(0, 16);
}

export const deviceKeyOf = (deviceId: string) => sha256(deviceId).subarray(0, 12);

/** One-shot hashing: a third cheaper than a Hash object for these short texts, ~2 per stored trip. */
const sha256 = (text: string) => hash("sha256", text, "buffer");

/** UTC YYYY-MM-DD of an epoch-ms time. */
export const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

export const monthOf = (t: number) => dayOf(t).slice(0, 7);

/**
 * What a trip store's append computes of a batch's trips before it writes anything, computed as each
 * trip joins the batch (pipeline.ts `AheadOfStore`): fingerprints, days, device keys and the trips'
 * columns per month. With matching on worker threads the batch fills while they match; at the store
 * the workers would wait for this work. A store uses it only for exactly these trips (`preparedFor`);
 * the columns only when every trip is new, as they hold them all.
 */
export class PreparedTrips {
  readonly trips: MatchedTrip[] = [];
  readonly fingerprints: Buffer[] = [];
  readonly days: string[] = [];
  private readonly deviceKeys = new Map<string, Buffer>();
  /** Per month (YYYY-MM), in order of first trip: its trips' columns. */
  private readonly months = new Map<string, TripColumnsBuilder>();

  add(trip: MatchedTrip): void {
    const day = dayOf(trip.startT);
    this.trips.push(trip);
    this.fingerprints.push(fingerprintOf(trip));
    this.days.push(day);
    if (!this.deviceKeys.has(trip.deviceId)) this.deviceKeys.set(trip.deviceId, deviceKeyOf(trip.deviceId));
    const month = day.slice(0, 7);
    let columns = this.months.get(month);
    if (!columns) this.months.set(month, (columns = new TripColumnsBuilder()));
    columns.add(trip);
  }

  /** True when this holds exactly `trips`, in order. */
  preparedFor(trips: readonly MatchedTrip[]): boolean {
    return trips.length === this.trips.length && trips.every((t, i) => t === this.trips[i]);
  }

  deviceKey(deviceId: string): Buffer {
    return this.deviceKeys.get(deviceId) ?? deviceKeyOf(deviceId);
  }

  /** Every trip's columns per month, months in order of first trip (as a grouping of `trips` would give). */
  *columnsByMonth(): Iterable<[month: string, columns: TripColumns]> {
    for (const [month, builder] of this.months) yield [month, builder.columns()];
  }
}
