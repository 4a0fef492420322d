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

const DAY_MS = 86_400_000;
/** Days formatted so far, by day number: a `Date` and its ISO text per trip cost ~2 µs, a third of `add`. */
const dayText = new Map<number, string>();

/** UTC YYYY-MM-DD of an epoch-ms time. */
export function dayOf(t: number): string {
  const day = Math.floor(t / DAY_MS);
  let text = dayText.get(day);
  if (text === undefined) {
    // Bounded: an ingest spans a few months; a long-running process sees many.
    if (dayText.size >= 4096) dayText.clear();
    text = new Date(day * DAY_MS).toISOString().slice(0, 10);
    dayText.set(day, text);
  }
  return text;
}

export const monthOf = (t: number) => dayOf(t).slice(0, 7);

/**
 * What a trip store's append computes of a batch's trips before it writes anything, computed as each
 * trip joins the batch (pipeline.ts `AheadOfStore`): fingerprints, days, device keys and the trips'
 * columns per month. With matching on worker threads the batch fills while they match; at the store
 * the workers would wait for this work. It keeps no object per trip: `trips` makes stand-ins that read
 * from the columns. Kept whole until the batch was stored, the matched trips' ~50 path step objects
 * each outlived V8's young generation (~20 MB promoted per 4,000 trips; matching cost ~11 % more CPU in
 * an ingest than alone). A store uses it only for exactly its own stand-ins (`preparedFor`); the
 * columns only when every trip is new, as they hold them all.
 */
export class PreparedTrips {
  readonly days: string[] = [];
  private fingerprintBytes = Buffer.alloc(16 * 1024);
  private readonly deviceKeys = new Map<string, Buffer>();
  /** Per month (YYYY-MM), in order of first trip: its trips' columns. */
  private readonly months = new Map<string, TripColumnsBuilder>();
  /** Each trip's month columns and its row there. */
  private readonly monthOf: TripColumnsBuilder[] = [];
  private readonly rowOf: number[] = [];
  private standIns: MatchedTrip[] | undefined;

  get count(): number {
    return this.days.length;
  }

  add(trip: MatchedTrip): void {
    const i = this.count;
    const day = dayOf(trip.startT);
    this.days.push(day);
    if (16 * (i + 1) > this.fingerprintBytes.length) {
      const grown = Buffer.alloc(2 * this.fingerprintBytes.length);
      this.fingerprintBytes.copy(grown);
      this.fingerprintBytes = grown;
    }
    fingerprintOf(trip).copy(this.fingerprintBytes, 16 * i);
    if (!this.deviceKeys.has(trip.deviceId)) this.deviceKeys.set(trip.deviceId, deviceKeyOf(trip.deviceId));
    const month = day.slice(0, 7);
    let columns = this.months.get(month);
    if (!columns) this.months.set(month, (columns = new TripColumnsBuilder()));
    this.monthOf.push(columns);
    this.rowOf.push(columns.count);
    columns.add(trip);
    this.standIns = undefined;
  }

  /** Trip i's fingerprint (fingerprintOf). */
  fingerprint(i: number): Buffer {
    return this.fingerprintBytes.subarray(16 * i, 16 * (i + 1));
  }

  /**
   * The trips, in the order added, as stand-ins read from the columns: every field as stored (the length
   * as float32), the path decoded when read. The same array on every call until the next `add`.
   */
  get trips(): MatchedTrip[] {
    this.standIns ??= this.makeStandIns();
    return this.standIns;
  }

  /** A loop in a method: a callback made per batch would be compiled afresh per batch. */
  private makeStandIns(): MatchedTrip[] {
    const out: MatchedTrip[] = [];
    for (let i = 0; i < this.monthOf.length; i++) out.push(this.monthOf[i].tripAt(this.rowOf[i]));
    return out;
  }

  /** True when `trips` are this batch's own stand-ins, in order. */
  preparedFor(trips: readonly MatchedTrip[]): boolean {
    return this.standIns !== undefined && trips === this.standIns;
  }

  deviceKey(deviceId: string): Buffer {
    return this.deviceKeys.get(deviceId) ?? deviceKeyOf(deviceId);
  }

  /** Every trip's columns per month, months in order of first trip (as a grouping of `trips` would give). */
  *columnsByMonth(): Iterable<[month: string, columns: TripColumns]> {
    for (const [month, builder] of this.months) yield [month, builder.columns()];
  }
}
