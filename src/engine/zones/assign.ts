import type { LonLat } from "../network/types.js";
import { DIRECTION_TOLERANCE_DEG, endZonesAt, type CompiledZoneSet, type ZoneDef } from "./compile.js";
import { angleBetween, bearingOf } from "./geometry.js";

/** What zone assignment needs of a trip: its ends and its path as network segment indexes. */
export interface TripPath {
  origin: LonLat;
  destination: LonLat;
  /** Network segment indexes (Network.segments positions) in travel order. */
  segments: ArrayLike<number>;
  /** 1 when the step runs along the segment's geometry, 0 against it. */
  forward: ArrayLike<number>;
  /**
   * When the path holds only some of the trip's steps (TripView): the step number of each, which the
   * visits' positions count; absent, entry i is step i.
   */
  steps?: ArrayLike<number>;
}

/** A zone a trip meets, with where along the path (step index + fraction; ±Infinity for trip ends). */
export interface ZoneVisit {
  zone: number;
  position: number;
}

/** Heading test of a zone: no direction → any; otherwise within tolerance, or of the opposite too when bidi. */
export function headingMatches(zone: ZoneDef, heading: number): boolean {
  if (zone.direction === null) return true;
  if (angleBetween(heading, zone.direction) <= DIRECTION_TOLERANCE_DEG) return true;
  return zone.isBidi && angleBetween(heading, zone.direction + 180) <= DIRECTION_TOLERANCE_DEG;
}

interface PolygonPass {
  position: number;
  dx: number;
  dy: number;
}

/**
 * Pass-through zones of a set met along the path, each once, at its first
 * position. A polygon's heading is that of the trip's whole run inside it
 * (length-weighted); a gate is passed at the first crossing in a matching heading.
 */
export function passedZones(set: CompiledZoneSet, trip: TripPath): ZoneVisit[] {
  const polygons = new Map<number, PolygonPass>();
  const gates = new Map<number, number>();
  for (let i = 0; i < trip.segments.length; i++) {
    const hits = set.passBySegment.get(trip.segments[i]);
    if (!hits) continue;
    const fwd = trip.forward[i] === 1;
    const step = trip.steps ? trip.steps[i] : i;
    for (const h of hits) {
      const position = step + (fwd ? h.atForward : h.atBackward);
      const dx = fwd ? h.dx : -h.dx;
      const dy = fwd ? h.dy : -h.dy;
      const zone = set.zones[h.zone];
      if (zone.kind === "line") {
        if (!gates.has(h.zone) && headingMatches(zone, bearingOf(dx, dy))) gates.set(h.zone, position);
        continue;
      }
      const seen = polygons.get(h.zone);
      if (seen) {
        seen.dx += dx;
        seen.dy += dy;
      } else polygons.set(h.zone, { position, dx, dy });
    }
  }
  const visits: ZoneVisit[] = [...gates].map(([zone, position]) => ({ zone, position }));
  for (const [zone, run] of polygons) {
    if (headingMatches(set.zones[zone], bearingOf(run.dx, run.dy)))
      visits.push({ zone, position: run.position });
  }
  return visits;
}

/** Zones of the set where the trip counts as starting: non-pass zones containing its origin, and passed zones. */
export function originVisits(set: CompiledZoneSet, trip: TripPath): ZoneVisit[] {
  const starts = endZonesAt(set, trip.origin).map((zone) => ({ zone, position: -Infinity }));
  return starts.concat(passedZones(set, trip));
}

export function destinationVisits(set: CompiledZoneSet, trip: TripPath): ZoneVisit[] {
  const ends = endZonesAt(set, trip.destination).map((zone) => ({ zone, position: Infinity }));
  return ends.concat(passedZones(set, trip));
}

/**
 * Origin-destination pairs of one trip. A pair counts when the origin visit
 * comes before the destination visit along the trip; a pass-through zone is
 * never paired with itself. Trips starting and ending in one non-pass zone
 * count for that zone's intrazonal pair.
 */
export function odPairs(
  origins: ZoneVisit[],
  destinations: ZoneVisit[],
  sameSet: boolean,
): [number, number][] {
  const pairs: [number, number][] = [];
  for (const o of origins) {
    for (const d of destinations) {
      if (!(o.position < d.position)) continue;
      if (sameSet && o.zone === d.zone && Number.isFinite(o.position)) continue;
      pairs.push([o.zone, d.zone]);
    }
  }
  return pairs;
}
