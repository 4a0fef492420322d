import type { LonLat } from "../network/types.js";
import type { HomeWork } from "./home-work.js";

/** The traveller kinds of a zone, as the CSVs name them (hwl_enable_visitor / _resident / _worker). */
export const TRAVELER_TYPES = ["Visitor", "Resident", "Worker"] as const;
export type TravelerType = (typeof TRAVELER_TYPES)[number];

/** A place (grid cell or preset area) holding fewer devices than this is not shown on its own. */
export const MIN_DEVICES_PER_PLACE = 5;

/** Where a home or work place lies: a place key (cell id, area id), or null outside every place. */
export type Locate = (p: LonLat) => string | null;

export interface HomeWorkRow {
  zone: number;
  dayType: number;
  dayPart: number;
  travelerType: TravelerType;
  /** The place key, or null for the places suppressed together (fewer than MIN_DEVICES_PER_PLACE each). */
  place: string | null;
  /** Fraction of the kind's trips (expanded) in the zone, day type and part whose device lives / works there. */
  share: number;
  devices: number;
}

export interface HomeWorkQuery {
  /** By device number: its inferred places. */
  places: readonly HomeWork[];
  /** Whether a zone holds a point (line zones hold none). */
  contains(zone: number, p: LonLat): boolean;
  kinds: readonly TravelerType[];
  /** Which place of the devices the rows describe. */
  side: "home" | "work";
  locate: Locate;
}

/**
 * The devices behind each zone's trips, per day type and day part, with their trips' weight: what the
 * home and work metrics split by where the devices live and work. Fed with the zone activity's
 * observed trips (personal travellers only; the caller leaves fleet vehicles out). Entries are kept
 * as flat columns (16 bytes each, one per trip, zone and slice) and summed per device only when the
 * rows are made: a million trips over a thousand zones stay in a few hundred MB.
 */
export class HomeWorkTally {
  private keys = new Int32Array(4096);
  private devices = new Int32Array(4096);
  private weights = new Float64Array(4096);
  private count = 0;

  constructor(
    private readonly dayTypes: number,
    private readonly dayParts: number,
  ) {}

  add(
    device: number,
    weight: number,
    zones: Iterable<number>,
    dayTypes: readonly number[],
    dayParts: readonly number[],
  ): void {
    for (const zone of zones)
      for (const dt of dayTypes)
        for (const dp of dayParts) {
          if (this.count === this.keys.length) this.grow();
          const i = this.count++;
          this.keys[i] = (zone * this.dayTypes + dt) * this.dayParts + dp;
          this.devices[i] = device;
          this.weights[i] = weight;
        }
  }

  /**
   * Rows ordered day type → zone → day part → traveller kind → share (largest first) → place. Each
   * (zone, slice, kind) splits its trips over the places; the suppressed places share one row, so the
   * shares of a kind add up to 1. Devices whose side is unknown (no inferred home; no work place for
   * the work side) are left out of both numerator and denominator.
   */
  rows(q: HomeWorkQuery): HomeWorkRow[] {
    const rows: HomeWorkRow[] = [];
    const placeOf = new Map<number, string | null>();
    const slices = this.dayTypes * this.dayParts;
    let kindsOfDevice = new Map<number, TravelerType[]>();
    let kindsZone = -1;
    const sum = new Float64Array(q.places.length);
    for (const { key, devices } of this.byKey(sum)) {
      const zone = Math.floor(key / slices);
      if (zone !== kindsZone) [kindsOfDevice, kindsZone] = [new Map(), zone];
      const byKind = new Map<TravelerType, Map<string | null, { weight: number; devices: number }>>();
      for (const device of devices) {
        const weight = sum[device];
        const { home, work } = q.places[device];
        if (!home) continue;
        const at = q.side === "home" ? home : work;
        if (!at) continue;
        if (!placeOf.has(device)) placeOf.set(device, q.locate(at));
        const place = placeOf.get(device)!;
        if (place === null) continue;
        let kinds = kindsOfDevice.get(device);
        if (!kinds) kindsOfDevice.set(device, (kinds = kindsOf(zone, home, work, q)));
        for (const kind of kinds) {
          let places = byKind.get(kind);
          if (!places) byKind.set(kind, (places = new Map()));
          const cell = places.get(place) ?? { weight: 0, devices: 0 };
          cell.weight += weight;
          cell.devices++;
          places.set(place, cell);
        }
      }
      const slice = {
        zone,
        dayType: Math.floor(key / this.dayParts) % this.dayTypes,
        dayPart: key % this.dayParts,
      };
      for (const kind of q.kinds) {
        const places = byKind.get(kind);
        if (places) rows.push(...kindRows(places, { ...slice, travelerType: kind }));
      }
    }
    // Stable: kinds and shares keep their order within a slice.
    return rows.sort((a, b) => a.dayType - b.dayType || a.zone - b.zone || a.dayPart - b.dayPart);
  }

  /**
   * The entries grouped by key in key order (a counting sort), each key's devices summed into `sum`
   * (indexed by device, reset per key) and listed once.
   */
  private *byKey(sum: Float64Array): Generator<{ key: number; devices: number[] }> {
    const { keys, devices, weights, count } = this;
    let maxKey = -1;
    for (let i = 0; i < count; i++) if (keys[i] > maxKey) maxKey = keys[i];
    const start = new Int32Array(maxKey + 2);
    for (let i = 0; i < count; i++) start[keys[i] + 1]++;
    for (let k = 0; k <= maxKey; k++) start[k + 1] += start[k];
    const order = new Int32Array(count);
    const next = start.slice(0, maxKey + 1);
    for (let i = 0; i < count; i++) order[next[keys[i]]++] = i;
    // The last key (+ 1) each device was listed under.
    const listedAt = new Int32Array(sum.length);
    for (let key = 0; key <= maxKey; key++) {
      if (start[key] === start[key + 1]) continue;
      const listed: number[] = [];
      for (let j = start[key]; j < start[key + 1]; j++) {
        const d = devices[order[j]];
        if (listedAt[d] !== key + 1) {
          listedAt[d] = key + 1;
          listed.push(d);
        }
        sum[d] += weights[order[j]];
      }
      yield { key, devices: listed };
      for (const d of listed) sum[d] = 0;
    }
  }

  private grow(): void {
    const grow = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T) => {
      const b = make(a.length * 2);
      b.set(a);
      return b;
    };
    this.keys = grow(this.keys, (n) => new Int32Array(n));
    this.devices = grow(this.devices, (n) => new Int32Array(n));
    this.weights = grow(this.weights, (n) => new Float64Array(n));
  }
}

/** Resident: lives in the zone; worker: works there (both at once is possible); visitor: neither. */
function kindsOf(zone: number, home: LonLat, work: LonLat | null, q: HomeWorkQuery): TravelerType[] {
  const resident = q.contains(zone, home);
  const worker = work !== null && q.contains(zone, work);
  const kinds: TravelerType[] = [];
  if (resident) kinds.push("Resident");
  if (worker) kinds.push("Worker");
  if (!resident && !worker) kinds.push("Visitor");
  return kinds.filter((k) => q.kinds.includes(k));
}

function kindRows(
  places: Map<string | null, { weight: number; devices: number }>,
  slice: Pick<HomeWorkRow, "zone" | "dayType" | "dayPart" | "travelerType">,
): HomeWorkRow[] {
  const total = [...places.values()].reduce((sum, c) => sum + c.weight, 0);
  const shown: HomeWorkRow[] = [];
  const hidden = { weight: 0, devices: 0 };
  for (const [place, c] of places) {
    if (c.devices >= MIN_DEVICES_PER_PLACE)
      shown.push({ ...slice, place, share: c.weight / total, devices: c.devices });
    else {
      hidden.weight += c.weight;
      hidden.devices += c.devices;
    }
  }
  shown.sort((a, b) => b.share - a.share || String(a.place).localeCompare(String(b.place)));
  if (hidden.devices > 0)
    shown.push({ ...slice, place: null, share: hidden.weight / total, devices: hidden.devices });
  return shown;
}
