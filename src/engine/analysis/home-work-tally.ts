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
 * observed trips (personal travellers only; the caller leaves fleet vehicles out).
 */
export class HomeWorkTally {
  /** (zone, day type, day part) → device number → summed trip weight. */
  private readonly cells = new Map<number, Map<number, number>>();

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
          const key = (zone * this.dayTypes + dt) * this.dayParts + dp;
          let devices = this.cells.get(key);
          if (!devices) this.cells.set(key, (devices = new Map()));
          devices.set(device, (devices.get(device) ?? 0) + weight);
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
    const keys = [...this.cells.keys()].sort((a, b) => this.order(a) - this.order(b));
    for (const key of keys) {
      const dp = key % this.dayParts;
      const dt = Math.floor(key / this.dayParts) % this.dayTypes;
      const zone = Math.floor(key / this.dayParts / this.dayTypes);
      const byKind = new Map<TravelerType, Map<string | null, { weight: number; devices: number }>>();
      for (const [device, weight] of this.cells.get(key)!) {
        const { home, work } = q.places[device];
        if (!home) continue;
        const at = q.side === "home" ? home : work;
        if (!at) continue;
        if (!placeOf.has(device)) placeOf.set(device, q.locate(at));
        const place = placeOf.get(device)!;
        if (place === null) continue;
        for (const kind of kindsOf(zone, home, work, q)) {
          let places = byKind.get(kind);
          if (!places) byKind.set(kind, (places = new Map()));
          const cell = places.get(place) ?? { weight: 0, devices: 0 };
          cell.weight += weight;
          cell.devices++;
          places.set(place, cell);
        }
      }
      for (const kind of q.kinds) {
        const places = byKind.get(kind);
        if (places) rows.push(...kindRows(places, { zone, dayType: dt, dayPart: dp, travelerType: kind }));
      }
    }
    return rows;
  }

  /** Sort key day type → zone → day part of a cell key. */
  private order(key: number): number {
    const dp = key % this.dayParts;
    const dt = Math.floor(key / this.dayParts) % this.dayTypes;
    const zone = Math.floor(key / this.dayParts / this.dayTypes);
    return (dt * 1e6 + zone) * this.dayParts + dp;
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
