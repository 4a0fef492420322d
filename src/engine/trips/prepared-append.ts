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

  /**
   * Adds a trip; answers what the batch keeps of it: a stand-in whose path is read back from the columns
   * when asked (only when some trips of the batch were stored before, or by a store that takes objects).
   * Kept whole until the batch is stored, a trip's ~50 path step objects outlived V8's young generation:
   * matching cost ~11 % more CPU in an ingest than alone.
   */
  add(trip: MatchedTrip): MatchedTrip {
    const day = dayOf(trip.startT);
    this.fingerprints.push(fingerprintOf(trip));
    this.days.push(day);
    if (!this.deviceKeys.has(trip.deviceId)) this.deviceKeys.set(trip.deviceId, deviceKeyOf(trip.deviceId));
    const month = day.slice(0, 7);
    let columns = this.months.get(month);
    if (!columns) this.months.set(month, (columns = new TripColumnsBuilder()));
    const standIn = packedTrip(trip, columns, columns.count);
    columns.add(trip);
    this.trips.push(standIn);
    return standIn;
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

/**
 * A matched trip whose path lives in `columns` as row `row`: every other field as the trip has it, the
 * path decoded on each read. It is the trip's own: the matcher gives step times in whole milliseconds.
 */
function packedTrip(trip: MatchedTrip, columns: TripColumnsBuilder, row: number): MatchedTrip {
  const { path: _path, ...fields } = trip;
  return Object.defineProperty(fields, "path", {
    get: () => columns.pathOf(row),
    enumerable: true,
  }) as MatchedTrip;
}
