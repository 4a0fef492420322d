import type { CompiledZoneSet } from "../zones/compile.js";
import { destinationVisits, odPairs, originVisits, type TripPath, type ZoneVisit } from "../zones/assign.js";
import { daysBetween, type LocalClock } from "../time.js";

/** Day types as sets of ISO weekdays (1 = Monday), day parts as local hour spans (end inclusive). */
export interface OdSlicing {
  dayTypes: { weekdays: readonly number[] }[];
  dayParts: { startHour: number; endHour: number }[];
  /** Local calendar days analysed (from the request's date ranges), YYYY-MM-DD inclusive spans. */
  dateSpans: { from: string; to: string }[];
  /**
   * Length of the day parts' time slots in minutes, dividing an hour (default 60: day parts are in
   * hours). 15 gives quarter-hour slots 0..95 (enable_15min). Minutes within the hour are read in UTC,
   * exact for time zones on whole-hour offsets.
   */
  slotMinutes?: number;
}

const HOUR_MS = 3_600_000;

export interface OdTrip extends TripPath {
  startT: number;
  endT: number;
  /** Device-type groups (output rows) this trip counts in. */
  groups: readonly number[];
  /** Expansion weight of the trip (1 = raw sample). */
  weight: number;
  /** Trip attributes read by the distribution metrics (see od-distributions.ts). */
  lengthM?: number;
  /** Index into TRIP_PURPOSES, or NO_PURPOSE. */
  purpose?: number;
  incomeBand?: number;
}

/** One analysed trip that meets a zone, as an observer of the aggregation sees it. */
export interface ObservedTrip {
  trip: OdTrip;
  origins: ZoneVisit[];
  destinations: ZoneVisit[];
  pairs: [number, number][];
  /** Local ISO weekday and the day types and parts the trip falls in. */
  weekday: number;
  dayTypes: readonly number[];
  dayParts: readonly number[];
}

interface Cell {
  weight: number;
  sample: number;
  durationS: number;
}

export interface OdRow {
  group: number;
  origin: number;
  destination: number;
  dayType: number;
  dayPart: number;
  /** Expanded average daily trips between the zones, in the day type and part. */
  odTraffic: number;
  originTraffic: number;
  destinationTraffic: number;
  /** Mean duration of the sampled trips, minutes. */
  avgDurationMin: number;
  sample: number;
}

/**
 * Sums trips per (group, origin, destination, day type, day part) and per zone,
 * then turns sums into averages per day of each day type.
 */
export class OdAggregator {
  // Numeric keys (see sliceOf/cellKey): string keys cost most of the time on large analyses.
  private readonly cells = new Map<number, Cell>();
  private readonly originTotals = new Map<number, number>();
  private readonly destinationTotals = new Map<number, number>();
  private readonly days = new Map<string, number>();
  private readonly daysPerType: number[];
  /** Day parts of each time slot of the day (hours unless slicing.slotMinutes says otherwise). */
  private readonly slotParts: number[][];
  private readonly slotsPerHour: number;
  /** False: values are totals over the analysed days (trip_counts output) rather than daily averages. */
  averagePerDay = true;
  private readonly weekdayTypes: number[][];
  tripsSeen = 0;
  tripsInZones = 0;
  /** Sees every analysed trip that meets a zone: trip-attribute distributions and calibration read it. */
  observer: ((seen: ObservedTrip) => void) | null = null;

  constructor(
    private readonly oz: CompiledZoneSet,
    private readonly dz: CompiledZoneSet,
    private readonly sameSet: boolean,
    private readonly slicing: OdSlicing,
    private readonly clock: LocalClock,
  ) {
    for (const span of slicing.dateSpans)
      for (const d of daysBetween(span.from, span.to)) this.days.set(d.day, d.weekday);
    this.daysPerType = slicing.dayTypes.map(
      (dt) => [...this.days.values()].filter((w) => dt.weekdays.includes(w)).length,
    );
    this.slotsPerHour = 60 / (slicing.slotMinutes ?? 60);
    this.slotParts = Array.from({ length: 24 * this.slotsPerHour }, (_, slot) =>
      slicing.dayParts.flatMap((p, i) => (slot >= p.startHour && slot <= p.endHour ? [i] : [])),
    );
    this.weekdayTypes = Array.from({ length: 8 }, (_, w) =>
      slicing.dayTypes.flatMap((t, i) => (t.weekdays.includes(w) ? [i] : [])),
    );
  }

  add(trip: OdTrip): void {
    this.tripsSeen++;
    const local = this.clock.at(trip.startT);
    if (!this.days.has(local.day)) return;
    const origins = originVisits(this.oz, trip);
    const destinations = destinationVisits(this.dz, trip);
    if (origins.length === 0 && destinations.length === 0) return;
    this.tripsInZones++;
    const pairs = odPairs(origins, destinations, this.sameSet);
    const durationS = (trip.endT - trip.startT) / 1000;
    const slot =
      this.slotsPerHour === 1
        ? local.hour
        : local.hour * this.slotsPerHour +
          Math.floor(((trip.startT % HOUR_MS) / HOUR_MS) * this.slotsPerHour);
    const dayParts = this.slotParts[slot];
    this.observer?.({
      trip,
      origins,
      destinations,
      pairs,
      weekday: local.weekday,
      dayTypes: this.weekdayTypes[local.weekday],
      dayParts,
    });
    for (const dt of this.weekdayTypes[local.weekday]) {
      for (const dp of dayParts) {
        for (const g of trip.groups) {
          const slice = this.sliceOf(g, dt, dp);
          for (const [o, d] of pairs) this.addCell(this.cellKey(slice, o, d), trip.weight, durationS);
          addZones(this.originTotals, slice * this.oz.zones.length, origins, trip.weight);
          addZones(this.destinationTotals, slice * this.dz.zones.length, destinations, trip.weight);
        }
      }
    }
  }

  /** Group, day type and day part as one number; decoded by sliceParts. */
  private sliceOf(group: number, dayType: number, dayPart: number): number {
    return (group * this.slicing.dayTypes.length + dayType) * this.slicing.dayParts.length + dayPart;
  }

  private sliceParts(slice: number): { group: number; dayType: number; dayPart: number } {
    const parts = this.slicing.dayParts.length;
    const types = this.slicing.dayTypes.length;
    const dayPart = slice % parts;
    const rest = (slice - dayPart) / parts;
    return { group: Math.floor(rest / types), dayType: rest % types, dayPart };
  }

  private cellKey(slice: number, origin: number, destination: number): number {
    return (slice * this.oz.zones.length + origin) * this.dz.zones.length + destination;
  }

  private addCell(key: number, weight: number, durationS: number): void {
    const cell = this.cells.get(key);
    if (cell) {
      cell.weight += weight;
      cell.sample++;
      cell.durationS += durationS;
    } else this.cells.set(key, { weight, sample: 1, durationS });
  }

  /** A summed value as written: the rounded daily average of the day type, or the rounded total. */
  perDay(sum: number, dayType: number): number {
    if (!this.averagePerDay) return Math.round(sum);
    const days = this.daysPerType[dayType];
    return days > 0 ? Math.round(sum / days) : 0;
  }

  /** Number of analysed days of each day type (the divisor of the daily averages). */
  dayCounts(): number[] {
    return [...this.daysPerType];
  }

  /**
   * Rows with at least one sampled trip, ordered day type → group → origin → destination → day part.
   * Traffic is multiplied by the group's factor of `scaleOfGroup` (volume output) before rounding.
   */
  rows(groupCount: number, scaleOfGroup?: readonly number[]): OdRow[] {
    const origins = this.oz.zones.length;
    const destinations = this.dz.zones.length;
    const rows: OdRow[] = [];
    // Only the cells that exist, sorted into the output order (not a scan of every possible cell).
    for (const [key, cell] of this.cells) {
      const destination = key % destinations;
      const origin = ((key - destination) / destinations) % origins;
      const { group, dayType, dayPart } = this.sliceParts(Math.floor(key / (origins * destinations)));
      if (group >= groupCount) continue;
      const slice = this.sliceOf(group, dayType, dayPart);
      const scale = scaleOfGroup?.[group] ?? 1;
      const perDay = (w: number) => this.perDay(w * scale, dayType);
      rows.push({
        group,
        origin,
        destination,
        dayType,
        dayPart,
        odTraffic: perDay(cell.weight),
        originTraffic: perDay(this.originTotals.get(slice * origins + origin) ?? 0),
        destinationTraffic: perDay(this.destinationTotals.get(slice * destinations + destination) ?? 0),
        avgDurationMin: Math.round(cell.durationS / cell.sample / 60),
        sample: cell.sample,
      });
    }
    return rows.sort(
      (a, b) =>
        a.dayType - b.dayType ||
        a.group - b.group ||
        a.origin - b.origin ||
        a.destination - b.destination ||
        a.dayPart - b.dayPart,
    );
  }

  /** Per zone and slice: expanded daily traffic as origin and as destination (zone_od_all), scaled like rows(). */
  zoneTotals(scaleOfGroup?: readonly number[]): {
    side: "origin" | "destination";
    group: number;
    dayType: number;
    dayPart: number;
    zone: number;
    traffic: number;
  }[] {
    const out: ReturnType<OdAggregator["zoneTotals"]> = [];
    const read = (side: "origin" | "destination", totals: Map<number, number>, zones: number) => {
      for (const [key, w] of totals) {
        const zone = key % zones;
        const { group, dayType, dayPart } = this.sliceParts((key - zone) / zones);
        const traffic = this.perDay(w * (scaleOfGroup?.[group] ?? 1), dayType);
        out.push({ side, group, dayType, dayPart, zone, traffic });
      }
    };
    read("origin", this.originTotals, this.oz.zones.length);
    read("destination", this.destinationTotals, this.dz.zones.length);
    return out;
  }
}

/** Adds the trip once to each zone it visits; `base` is the slice's first key (slice × zone count). */
function addZones(totals: Map<number, number>, base: number, visits: ZoneVisit[], weight: number): void {
  for (const zone of new Set(visits.map((v) => v.zone))) {
    const key = base + zone;
    totals.set(key, (totals.get(key) ?? 0) + weight);
  }
}
