import type { ObservedTrip } from "./od-aggregate.js";

/**
 * How an OD_MF scan numbers its zones: the origin side lists the origin zones, then the middle
 * filters; the destination side lists the destination zones, then the middle filters (one scan sees
 * every trip that meets any of them).
 */
export interface MfLayout {
  origins: number;
  middles: number;
  destinations: number;
}

export type MfRole = "origin" | "middle" | "destination";

export interface OdMfRow {
  group: number;
  origin: number;
  middle: number;
  destination: number;
  dayType: number;
  dayPart: number;
  /** Summed expansion weight of the trips (the caller averages it per day). */
  weight: number;
  sample: number;
  avgDurationMin: number;
}

interface Cell {
  weight: number;
  sample: number;
  durationS: number;
}

/**
 * Origin → middle filter → destination: a trip counts for (o, m, d) when it starts in (or passes)
 * o, then passes m, then ends in (or passes) d, in that order along its path. Also sums each zone's
 * own traffic in its role (trips from an origin, through a middle filter, to a destination, with no
 * limit on the other ends), as the vendor's zone traffic columns hold.
 */
export class OdMfTally {
  private readonly cells = new Map<string, Cell>();
  private readonly zones = new Map<string, number>();

  constructor(readonly layout: MfLayout) {}

  /** Adds one observed trip; answers its (origin, middle, destination) triples. */
  add(seen: ObservedTrip): [number, number, number][] {
    const { origins: nO, destinations: nD } = this.layout;
    const origins = seen.origins.filter((v) => v.zone < nO);
    const middles = seen.origins.filter((v) => v.zone >= nO);
    const destinations = seen.destinations.filter((v) => v.zone < nD);
    const triples: [number, number, number][] = [];
    for (const o of origins)
      for (const m of middles)
        if (o.position < m.position)
          for (const d of destinations)
            if (m.position < d.position) triples.push([o.zone, m.zone - nO, d.zone]);
    const { trip } = seen;
    const durationS = (trip.endT - trip.startT) / 1000;
    const met: [MfRole, number][] = [...new Set(origins.map((v) => v.zone))].map((z): [MfRole, number] => [
      "origin",
      z,
    ]);
    for (const z of new Set(middles.map((v) => v.zone - nO))) met.push(["middle", z]);
    for (const z of new Set(destinations.map((v) => v.zone))) met.push(["destination", z]);
    for (const group of trip.groups)
      for (const dt of seen.dayTypes)
        for (const dp of seen.dayParts) {
          const slice = `${group}|${dt}|${dp}`;
          for (const [o, m, d] of triples) {
            const key = `${slice}|${o}|${m}|${d}`;
            const cell = this.cells.get(key);
            if (cell) {
              cell.weight += trip.weight;
              cell.sample++;
              cell.durationS += durationS;
            } else this.cells.set(key, { weight: trip.weight, sample: 1, durationS });
          }
          for (const [role, z] of met) {
            const key = `${slice}|${role}|${z}`;
            this.zones.set(key, (this.zones.get(key) ?? 0) + trip.weight);
          }
        }
    return triples;
  }

  /** A zone's summed traffic in a role and slice. */
  zoneWeight(role: MfRole, zone: number, group: number, dayType: number, dayPart: number): number {
    return this.zones.get(`${group}|${dayType}|${dayPart}|${role}|${zone}`) ?? 0;
  }

  /** Triples with trips, ordered day type → group → origin → middle → destination → day part. */
  rows(): OdMfRow[] {
    const rows: OdMfRow[] = [];
    for (const [key, cell] of this.cells) {
      const [group, dayType, dayPart, origin, middle, destination] = key.split("|").map(Number);
      rows.push({
        group,
        origin,
        middle,
        destination,
        dayType,
        dayPart,
        weight: cell.weight,
        sample: cell.sample,
        avgDurationMin: Math.round(cell.durationS / cell.sample / 60),
      });
    }
    return rows.sort(
      (a, b) =>
        a.dayType - b.dayType ||
        a.group - b.group ||
        a.origin - b.origin ||
        a.middle - b.middle ||
        a.destination - b.destination ||
        a.dayPart - b.dayPart,
    );
  }
}
