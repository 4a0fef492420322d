import type { CompiledZoneSet } from "../zones/compile.js";
import type { TripPath, ZoneVisit } from "../zones/assign.js";
import { VisitList, ZoneLookup } from "../zones/lookup.js";
import { daysBetween, type LocalClock } from "../time.js";
import { GROUP_SLOTS, OdSums, type OdSumsState } from "./od-sums.js";
import type { CellRecords } from "./cell-table.js";

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
  /** The stored device id (home and work inference tells a device's trips apart by it). */
  device?: string;
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

/** An analysed trip that meets a zone, in the aggregation's reused buffers (valid only during the call). */
export interface TripVisits {
  trip: OdTrip;
  origins: VisitList;
  destinations: VisitList;
  weekday: number;
  dayTypes: readonly number[];
  dayParts: readonly number[];
}

/** Sees every analysed trip that meets a zone without an object per trip (zone tallies). */
export interface VisitSink {
  addVisits(visits: TripVisits): void;
}

/** An OdAggregator's sums as plain data (structured-clone and v8-serialisable). */
export interface OdAggregatorState extends OdSumsState {
  tripsSeen: number;
  tripsInZones: number;
}

/** localHour of a start outside the analysed days. */
const NOT_ANALYSED = -1;

/** One reusable row handed to forEachRow's visitor. */
function emptyRow(): OdRow {
  return {
    group: 0,
    origin: 0,
    destination: 0,
    dayType: 0,
    dayPart: 0,
    odTraffic: 0,
    originTraffic: 0,
    destinationTraffic: 0,
    avgDurationMin: 0,
    sample: 0,
  };
}

/**
 * Sums trips per (group, origin, destination, day type, day part) and per zone,
 * then turns sums into averages per day of each day type. The sums are kept per
 * group mask, weekday and time slot (OdSums) and summed into the slices when the
 * rows are read; zone assignment reuses buffers, so a trip allocates nothing
 * unless an `observer` is set.
 */
export class OdAggregator {
  private readonly sums: OdSums;
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
  /** Like observer, but handed the reused buffers (no allocation per trip). */
  readonly sinks: VisitSink[] = [];
  private readonly oLookup: ZoneLookup;
  private readonly dLookup: ZoneLookup;
  private readonly origins = new VisitList();
  private readonly destinations = new VisitList();
  private readonly passed = new VisitList();
  private pairOrigin = new Int32Array(64);
  private pairDestination = new Int32Array(64);
  private readonly originCount: number;
  private readonly destinationCount: number;
  private readonly partCount: number;
  /** The TripVisits handed to the sinks, refilled per trip. */
  private readonly visits: TripVisits;
  /** localHour's cache: 0 = not yet known, else its answer + 2. */
  private hourTable = new Int32Array(0);
  private firstHour = 0;

  constructor(
    oz: CompiledZoneSet,
    dz: CompiledZoneSet,
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
    this.oLookup = lookupOf(oz);
    this.dLookup = lookupOf(dz);
    this.originCount = oz.zones.length;
    this.destinationCount = dz.zones.length;
    this.partCount = slicing.dayParts.length;
    this.sums = new OdSums(
      {
        weekdayTypes: this.weekdayTypes,
        slotParts: this.slotParts,
        dayTypes: slicing.dayTypes.length,
        dayParts: this.partCount,
      },
      this.slotParts.length,
      this.originCount,
      this.destinationCount,
    );
    this.visits = {
      trip: null as unknown as OdTrip,
      origins: this.origins,
      destinations: this.destinations,
      weekday: 0,
      dayTypes: [],
      dayParts: [],
    };
    const dayStarts = [...this.days.keys()].map((d) => Date.parse(`${d}T00:00:00Z`));
    if (dayStarts.length > 0) {
      this.firstHour = Math.min(...dayStarts) / HOUR_MS - 48;
      this.hourTable = new Int32Array(Math.max(...dayStarts) / HOUR_MS + 72 - this.firstHour);
    }
  }

  add(trip: OdTrip): void {
    this.tripsSeen++;
    const local = this.localHour(trip.startT);
    if (local === NOT_ANALYSED) return;
    const weekday = local >> 5;
    const hour = local & 31;
    const { origins, destinations } = this;
    this.assignZones(trip);
    if (origins.count === 0 && destinations.count === 0) return;
    this.tripsInZones++;
    const pairCount = this.findPairs();
    // Whole milliseconds: their sums are exact, so any split of the trips sums to the same cells.
    const durationMs = trip.endT - trip.startT;
    const slot =
      this.slotsPerHour === 1
        ? hour
        : hour * this.slotsPerHour + Math.floor(((trip.startT % HOUR_MS) / HOUR_MS) * this.slotsPerHour);
    const dayParts = this.slotParts[slot];
    const dayTypes = this.weekdayTypes[weekday];
    if (this.observer) this.observer(this.observed(trip, pairCount, weekday, dayTypes, dayParts));
    if (this.sinks.length > 0) {
      const visits = this.visits;
      visits.trip = trip;
      visits.weekday = weekday;
      visits.dayTypes = dayTypes;
      visits.dayParts = dayParts;
      for (const sink of this.sinks) sink.addVisits(visits);
    }
    // One cell per pair and one total per zone visit: the slices are summed when read (OdSums).
    const { weight } = trip;
    const sums = this.sums;
    const mask = maskOf(trip.groups);
    const fine = sums.fineOf(mask, weekday, slot);
    const D = this.destinationCount;
    for (let p = 0; p < pairCount; p++)
      sums.addPair(this.pairOrigin[p] * D + this.pairDestination[p], fine, weight, durationMs);
    for (let i = 0; i < origins.count; i++) sums.addOrigin(mask, weekday, slot, origins.zones[i], weight);
    for (let i = 0; i < destinations.count; i++)
      sums.addDestination(mask, weekday, slot, destinations.zones[i], weight);
  }

  /**
   * The local weekday × 32 + hour of the trip's start, or NOT_ANALYSED when its local day is not
   * in the date ranges. Cached per UTC hour in a dense table over the ranges (±2 days: no time
   * zone is 14 h or more off UTC), as LocalClock answers per hour.
   */
  private localHour(t: number): number {
    const i = Math.floor(t / HOUR_MS) - this.firstHour;
    if (!(i >= 0 && i < this.hourTable.length)) return NOT_ANALYSED;
    let v = this.hourTable[i];
    if (v === 0) {
      const local = this.clock.at(t);
      v = this.days.has(local.day) ? 2 + local.weekday * 32 + local.hour : 1;
      this.hourTable[i] = v;
    }
    return v - 2;
  }

  /**
   * Fills `origins` and `destinations` as originVisits / destinationVisits do; with one zone set on
   * both sides the path is walked once.
   */
  private assignZones(trip: OdTrip): void {
    const { origins, destinations, passed } = this;
    origins.clear();
    destinations.clear();
    this.oLookup.endZones(trip.origin, -Infinity, origins);
    this.dLookup.endZones(trip.destination, Infinity, destinations);
    if (this.oLookup === this.dLookup) {
      passed.clear();
      this.oLookup.passed(trip, passed);
      origins.append(passed);
      destinations.append(passed);
    } else {
      this.oLookup.passed(trip, origins);
      this.dLookup.passed(trip, destinations);
    }
  }

  /**
   * The trip's pairs (as odPairs): an origin visit before a destination visit, a pass-through
   * zone never with itself. Returns their number; they are in pairOrigin / pairDestination.
   */
  private findPairs(): number {
    const { origins: o, destinations: d } = this;
    let n = 0;
    for (let i = 0; i < o.count; i++) {
      const position = o.positions[i];
      for (let j = 0; j < d.count; j++) {
        if (!(position < d.positions[j])) continue;
        if (this.sameSet && o.zones[i] === d.zones[j] && Number.isFinite(position)) continue;
        if (n === this.pairOrigin.length) this.growPairs();
        this.pairOrigin[n] = o.zones[i];
        this.pairDestination[n] = d.zones[j];
        n++;
      }
    }
    return n;
  }

  private growPairs(): void {
    const o = new Int32Array(this.pairOrigin.length * 2);
    const d = new Int32Array(this.pairOrigin.length * 2);
    o.set(this.pairOrigin);
    d.set(this.pairDestination);
    this.pairOrigin = o;
    this.pairDestination = d;
  }

  private observed(
    trip: OdTrip,
    pairCount: number,
    weekday: number,
    dayTypes: readonly number[],
    dayParts: readonly number[],
  ): ObservedTrip {
    const pairs: [number, number][] = [];
    for (let p = 0; p < pairCount; p++) pairs.push([this.pairOrigin[p], this.pairDestination[p]]);
    return {
      trip,
      origins: this.origins.toArray(),
      destinations: this.destinations.toArray(),
      pairs,
      weekday,
      dayTypes,
      dayParts,
    };
  }

  /**
   * The sums so far, to be added to another aggregator of the same zones and slicing (analysis
   * shards). Sums of whole milliseconds, counts and weights on a fixed binary grid are exact, so the
   * merged sums equal those of one pass over all the trips, bit for bit.
   */
  exportState(withCells = true): OdAggregatorState {
    return {
      tripsSeen: this.tripsSeen,
      tripsInZones: this.tripsInZones,
      ...this.sums.exportState(withCells),
    };
  }

  /** The cells apart from exportState(false), cut into `pieces` runs of zone pairs (OdSums). */
  exportCellPieces(pieces: number): CellRecords[] {
    return this.sums.exportCellPieces(pieces);
  }

  /**
   * Adds another aggregator's exported sums to these. With `cellGroups`, only the cells of those
   * device groups are added (none for an empty list): a merge that writes some od_* metrics only
   * needs their groups' cells; the zone totals are always added.
   */
  absorb(state: OdAggregatorState, cellGroups?: readonly number[]): void {
    this.tripsSeen += state.tripsSeen;
    this.tripsInZones += state.tripsInZones;
    this.sums.absorb(state, cellGroups);
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
   * Visits the rows with at least one sampled trip, ordered day type → group → origin →
   * destination → day part, in one reused object (copy it to keep it). Traffic is multiplied by
   * the group's factor of `scaleOfGroup` (volume output) before rounding.
   */
  forEachRow(
    groupCount: number,
    scaleOfGroup: readonly number[] | undefined,
    visit: (row: OdRow) => void,
  ): void {
    const [D, P] = [this.destinationCount, this.partCount];
    const row = emptyRow();
    this.sums.forEachCell(groupCount, (dayType, group, pair, sums) => {
      const destination = pair % D;
      const origin = (pair - destination) / D;
      const scale = scaleOfGroup?.[group] ?? 1;
      row.group = group;
      row.origin = origin;
      row.destination = destination;
      row.dayType = dayType;
      for (let dayPart = 0; dayPart < P; dayPart++) {
        const sample = sums.sample[dayPart];
        if (sample === 0) continue;
        const slice = (dayType * GROUP_SLOTS + group) * P + dayPart;
        row.dayPart = dayPart;
        row.odTraffic = this.perDay(sums.weight[dayPart] * scale, dayType);
        row.originTraffic = this.perDay(this.sums.originTotal(slice, origin) * scale, dayType);
        row.destinationTraffic = this.perDay(this.sums.destinationTotal(slice, destination) * scale, dayType);
        row.avgDurationMin = Math.round(sums.durationMs[dayPart] / sample / 60_000);
        row.sample = sample;
        visit(row);
      }
    });
  }

  /** The rows of forEachRow as objects. */
  rows(groupCount: number, scaleOfGroup?: readonly number[]): OdRow[] {
    const rows: OdRow[] = [];
    this.forEachRow(groupCount, scaleOfGroup, (row) => rows.push({ ...row }));
    return rows;
  }

  /** A zone's expanded daily traffic as origin or destination in a slice (zone_od_all), scaled like the rows. */
  zoneTraffic(
    side: "origin" | "destination",
    zone: number,
    group: number,
    dayType: number,
    dayPart: number,
    scaleOfGroup?: readonly number[],
  ): number {
    const slice = (dayType * GROUP_SLOTS + group) * this.partCount + dayPart;
    const sum =
      side === "origin" ? this.sums.originTotal(slice, zone) : this.sums.destinationTotal(slice, zone);
    return this.perDay(sum * (scaleOfGroup?.[group] ?? 1), dayType);
  }
}

/** A trip's device-type groups as one bit mask. */
function maskOf(groups: readonly number[]): number {
  let mask = 0;
  for (const g of groups) {
    if (!(g >= 0 && g < GROUP_SLOTS)) throw new Error(`device-type group ${g} is out of range`);
    mask |= 1 << g;
  }
  return mask;
}

/** One ZoneLookup per compiled set, shared by the aggregators of an analysis (od and 15-minute). */
const lookups = new WeakMap<CompiledZoneSet, ZoneLookup>();

function lookupOf(set: CompiledZoneSet): ZoneLookup {
  let lookup = lookups.get(set);
  if (!lookup) lookups.set(set, (lookup = new ZoneLookup(set)));
  return lookup;
}
