import type { LonLat } from "../network/types.js";

/**
 * Home and work inference from a device's trips alone (no declared places): the home is where the
 * device usually spends the night, the work place where it usually stays through weekday working
 * hours. The rules and thresholds are documented in docs/analyses.md ("Home and work locations").
 */
export const HOME_WORK_RULES = {
  /** Anchors closer than this to a cluster's centre join it (GPS noise, parking on either side). */
  clusterRadiusM: 200,
  /** A day's last trip ending at or after this local hour ends where the device spends the night. */
  eveningHour: 19,
  /** A home needs this many distinct nights in its cluster. */
  minHomeNights: 2,
  /** Working hours (local, [from, to)) a weekday dwell must overlap. */
  workFromHour: 8,
  workToHour: 18,
  /** ...by at least this long. */
  minWorkDwellH: 2,
  /** A work place needs this many distinct weekdays in its cluster... */
  minWorkDays: 2,
  /** ...and this share of the weekdays the device made trips on (a favourite shop is not a job). */
  minWorkDayShare: 1 / 3,
  /** Dwells closer than this to the inferred home are at home, not at work. */
  minWorkFromHomeM: 300,
} as const;

export interface HomeWork {
  home: LonLat | null;
  work: LonLat | null;
  /** Distinct nights behind the home; weekdays behind the work place. */
  nights: number;
  workDays: number;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * Trips of many devices, appended in any order and kept as columns (a million trips take 48 MB).
 * `localMs` turns an epoch time into local wall-clock time counted from the epoch, so that local
 * days, weekdays and hours are plain arithmetic.
 */
export class DeviceTripLog {
  private readonly deviceOf = new Map<string, number>();
  readonly deviceIds: string[] = [];
  private device = new Int32Array(1024);
  private times = new Float64Array(2048);
  private points = new Float64Array(4096);
  private count = 0;

  constructor(private readonly localMs: (t: number) => number) {}

  /** The device's number (its index in deviceIds), registering it when new. */
  deviceNumber(id: string): number {
    let n = this.deviceOf.get(id);
    if (n === undefined) {
      n = this.deviceIds.length;
      this.deviceOf.set(id, n);
      this.deviceIds.push(id);
    }
    return n;
  }

  add(device: number, startT: number, endT: number, origin: LonLat, destination: LonLat): void {
    if (this.count === this.device.length) this.grow();
    const i = this.count++;
    this.device[i] = device;
    this.times[2 * i] = this.localMs(startT);
    this.times[2 * i + 1] = this.localMs(endT);
    const p = this.points;
    p[4 * i] = origin[0];
    p[4 * i + 1] = origin[1];
    p[4 * i + 2] = destination[0];
    p[4 * i + 3] = destination[1];
  }

  get size(): number {
    return this.count;
  }

  /** Each device's home and work place, by device number (devices without trips answer nulls). */
  infer(): HomeWork[] {
    const order = Array.from({ length: this.count }, (_, i) => i).sort(
      (a, b) => this.device[a] - this.device[b] || this.times[2 * a] - this.times[2 * b],
    );
    const out: HomeWork[] = this.deviceIds.map(() => ({ home: null, work: null, nights: 0, workDays: 0 }));
    for (let from = 0; from < order.length;) {
      let to = from;
      while (to < order.length && this.device[order[to]] === this.device[order[from]]) to++;
      out[this.device[order[from]]] = inferDevice(order.slice(from, to).map((i) => this.trip(i)));
      from = to;
    }
    return out;
  }

  private trip(i: number): LocalTrip {
    const p = this.points;
    return {
      start: this.times[2 * i],
      end: this.times[2 * i + 1],
      origin: [p[4 * i], p[4 * i + 1]],
      destination: [p[4 * i + 2], p[4 * i + 3]],
    };
  }

  private grow(): void {
    const grown = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T) => {
      const b = make(a.length * 2);
      b.set(a);
      return b;
    };
    this.device = grown(this.device, (n) => new Int32Array(n));
    this.times = grown(this.times, (n) => new Float64Array(n));
    this.points = grown(this.points, (n) => new Float64Array(n));
  }
}

/** A trip with local wall-clock times (ms from the epoch). */
export interface LocalTrip {
  start: number;
  end: number;
  origin: LonLat;
  destination: LonLat;
}

const localDay = (t: number) => Math.floor(t / DAY_MS);
const localHour = (t: number) => (t - localDay(t) * DAY_MS) / HOUR_MS;
/** ISO weekday (1 = Monday) of a local day number: day 0 (1970-01-01) was a Thursday. */
const weekdayOf = (day: number) => ((day + 3) % 7) + 1;

/** One device's home and work place from its trips in time order. */
export function inferDevice(trips: readonly LocalTrip[]): HomeWork {
  const home = densest(nightAnchors(trips), HOME_WORK_RULES.minHomeNights);
  const activeWeekdays = new Set(trips.map((t) => localDay(t.start)).filter((d) => weekdayOf(d) <= 5));
  const work = densest(
    workAnchors(trips).filter(
      (a) => !home || distanceM(a.point, home.centre) >= HOME_WORK_RULES.minWorkFromHomeM,
    ),
    Math.max(HOME_WORK_RULES.minWorkDays, HOME_WORK_RULES.minWorkDayShare * activeWeekdays.size),
  );
  return {
    home: home?.centre ?? null,
    work: work?.centre ?? null,
    nights: home?.days ?? 0,
    workDays: work?.days ?? 0,
  };
}

interface Anchor {
  point: LonLat;
  /** The night (local day the evening belongs to) or the working day it stands for. */
  day: number;
}

/**
 * Where the device spent each night: the origin of its first trip of a local day (it woke up there,
 * whatever the hour: sparse samples miss early trips more often than they invent a place) and the
 * destination of the day's last trip when that trip ends in the evening.
 */
function nightAnchors(trips: readonly LocalTrip[]): Anchor[] {
  const anchors: Anchor[] = [];
  trips.forEach((trip, i) => {
    const day = localDay(trip.start);
    if (i === 0 || localDay(trips[i - 1].start) !== day) anchors.push({ point: trip.origin, day: day - 1 });
    const last = i === trips.length - 1 || localDay(trips[i + 1].start) !== day;
    if (last && localHour(trip.end) >= HOME_WORK_RULES.eveningHour && localDay(trip.end) === day)
      anchors.push({ point: trip.destination, day });
  });
  return anchors;
}

/** Weekday stays between two trips of one local day that overlap working hours long enough. */
function workAnchors(trips: readonly LocalTrip[]): Anchor[] {
  const { workFromHour, workToHour, minWorkDwellH } = HOME_WORK_RULES;
  const anchors: Anchor[] = [];
  for (let i = 0; i + 1 < trips.length; i++) {
    const arrived = trips[i].end;
    const left = trips[i + 1].start;
    const day = localDay(arrived);
    if (localDay(left) !== day || weekdayOf(day) > 5) continue;
    const from = Math.max(arrived, day * DAY_MS + workFromHour * HOUR_MS);
    const to = Math.min(left, day * DAY_MS + workToHour * HOUR_MS);
    if (to - from >= minWorkDwellH * HOUR_MS) anchors.push({ point: trips[i].destination, day });
  }
  return anchors;
}

interface Cluster {
  centre: LonLat;
  sum: [number, number];
  size: number;
  days: Set<number>;
}

/**
 * Leader clustering in time order: an anchor joins the first cluster whose running centre is within
 * the radius, else starts one. The densest cluster is the one with the most distinct days (then the
 * most anchors, then the earliest); null when it has fewer than `minDays`.
 */
function densest(anchors: readonly Anchor[], minDays: number): { centre: LonLat; days: number } | null {
  const clusters: Cluster[] = [];
  for (const a of anchors) {
    let c = clusters.find((k) => distanceM(k.centre, a.point) <= HOME_WORK_RULES.clusterRadiusM);
    if (!c) {
      c = { centre: a.point, sum: [0, 0], size: 0, days: new Set() };
      clusters.push(c);
    }
    c.sum[0] += a.point[0];
    c.sum[1] += a.point[1];
    c.size++;
    c.centre = [c.sum[0] / c.size, c.sum[1] / c.size];
    c.days.add(a.day);
  }
  let best: Cluster | null = null;
  for (const c of clusters)
    if (!best || c.days.size > best.days.size || (c.days.size === best.days.size && c.size > best.size))
      best = c;
  return best && best.days.size >= minDays ? { centre: best.centre, days: best.days.size } : null;
}

/** Equirectangular distance in metres: exact enough within a city. */
export function distanceM(a: LonLat, b: LonLat): number {
  const ky = 111_195;
  const kx = ky * Math.cos((((a[1] + b[1]) / 2) * Math.PI) / 180);
  return Math.hypot((a[0] - b[0]) * kx, (a[1] - b[1]) * ky);
}
