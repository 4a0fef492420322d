import type { CompiledZoneSet } from "../zones/compile.js";
import { destinationVisits, odPairs, originVisits, type TripPath, type ZoneVisit } from "../zones/assign.js";
import { daysBetween, type LocalClock } from "../time.js";

/** Day types as sets of ISO weekdays (1 = Monday), day parts as local hour spans (end inclusive). */
export interface OdSlicing {
  dayTypes: { weekdays: readonly number[] }[];
  dayParts: { startHour: number; endHour: number }[];
  /** Local calendar days analysed (from the request's date ranges), YYYY-MM-DD inclusive spans. */
  dateSpans: { from: string; to: string }[];
}

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
  private readonly cells = new Map<string, Cell>();
  private readonly originTotals = new Map<string, number>();
  private readonly destinationTotals = new Map<string, number>();
  private readonly days = new Map<string, number>();
  private readonly daysPerType: number[];
  private readonly hourParts: number[][];
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
    this.hourParts = Array.from({ length: 24 }, (_, h) =>
      slicing.dayParts.flatMap((p, i) => (h >= p.startHour && h <= p.endHour ? [i] : [])),
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
    this.observer?.({
      trip,
      origins,
      destinations,
      pairs,
      weekday: local.weekday,
      dayTypes: this.weekdayTypes[local.weekday],
      dayParts: this.hourParts[local.hour],
    });
    for (const dt of this.weekdayTypes[local.weekday]) {
      for (const dp of this.hourParts[local.hour]) {
        for (const g of trip.groups) {
          const slice = `${g}|${dt}|${dp}`;
          for (const [o, d] of pairs) this.addCell(`${slice}|${o}|${d}`, trip.weight, durationS);
          addZones(this.originTotals, slice, origins, trip.weight);
          addZones(this.destinationTotals, slice, destinations, trip.weight);
        }
      }
    }
  }

  private addCell(key: string, weight: number, durationS: number): void {
    const cell = this.cells.get(key);
    if (cell) {
      cell.weight += weight;
      cell.sample++;
      cell.durationS += durationS;
    } else this.cells.set(key, { weight, sample: 1, durationS });
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
    const rows: OdRow[] = [];
    const { dayTypes, dayParts } = this.slicing;
    for (let dt = 0; dt < dayTypes.length; dt++) {
      for (let g = 0; g < groupCount; g++) {
        const scale = scaleOfGroup?.[g] ?? 1;
        const perDay = (w: number) =>
          this.daysPerType[dt] > 0 ? Math.round((w * scale) / this.daysPerType[dt]) : 0;
        for (let o = 0; o < this.oz.zones.length; o++) {
          for (let d = 0; d < this.dz.zones.length; d++) {
            for (let dp = 0; dp < dayParts.length; dp++) {
              const slice = `${g}|${dt}|${dp}`;
              const cell = this.cells.get(`${slice}|${o}|${d}`);
              if (!cell) continue;
              rows.push({
                group: g,
                origin: o,
                destination: d,
                dayType: dt,
                dayPart: dp,
                odTraffic: perDay(cell.weight),
                originTraffic: perDay(this.originTotals.get(`${slice}|${o}`) ?? 0),
                destinationTraffic: perDay(this.destinationTotals.get(`${slice}|${d}`) ?? 0),
                avgDurationMin: Math.round(cell.durationS / cell.sample / 60),
                sample: cell.sample,
              });
            }
          }
        }
      }
    }
    return rows;
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
    const read = (side: "origin" | "destination", totals: Map<string, number>) => {
      for (const [key, w] of totals) {
        const [group, dayType, dayPart, zone] = key.split("|").map(Number);
        const days = this.daysPerType[dayType];
        const scaled = w * (scaleOfGroup?.[group] ?? 1);
        out.push({ side, group, dayType, dayPart, zone, traffic: days > 0 ? Math.round(scaled / days) : 0 });
      }
    };
    read("origin", this.originTotals);
    read("destination", this.destinationTotals);
    return out;
  }
}

function addZones(totals: Map<string, number>, slice: string, visits: ZoneVisit[], weight: number): void {
  for (const zone of new Set(visits.map((v) => v.zone))) {
    const key = `${slice}|${zone}`;
    totals.set(key, (totals.get(key) ?? 0) + weight);
  }
}
