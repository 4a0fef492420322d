import type { Network } from "../network/network.js";
import type { LonLat } from "../network/types.js";
import { accessModeOf, type MatchedTrip, type PathStep } from "../trips/types.js";
import type { TripMatcher } from "./pipeline.js";

/** Fixes further than this from any allowed road are left out. */
const MAX_SNAP_M = 50;

/**
 * TEMPORARY stand-in for the real map matcher (`matchTrip`): snaps each fix to
 * its nearest allowed segment and takes the sequence of distinct segments as
 * the path, without routing between them. Good enough to exercise ingest and
 * storage end to end; replace it with the real matcher once that lands.
 */
export function nearestSegmentMatcher(network: Network): TripMatcher {
  return (trip) => {
    const mode = accessModeOf(trip.vehicleClass);
    const snaps = trip.points.flatMap((p) => {
      const [hit] = network.nearest([p.lon, p.lat], 1, (s) => network.allows(s, mode), MAX_SNAP_M);
      return hit ? [{ hit, t: p.t }] : [];
    });
    if (snaps.length < 2) return [];
    const path: PathStep[] = [];
    let lengthM = 0;
    snaps.forEach(({ hit, t }, i) => {
      const step = path.at(-1);
      if (step && step.segmentId === hit.segment.id) step.exitT = t;
      else path.push({ segmentId: hit.segment.id, forward: true, enterT: t, exitT: t });
      if (i > 0) lengthM += network.ruler.distance(snaps[i - 1].hit.point, hit.point);
      const prev = snaps[i - 1]?.hit;
      if (prev?.segment.id === hit.segment.id) path.at(-1)!.forward = hit.alongM >= prev.alongM;
    });
    const matched: MatchedTrip = {
      deviceId: trip.deviceId,
      vehicleClass: trip.vehicleClass,
      source: trip.source,
      origin: snaps[0].hit.point as LonLat,
      destination: snaps.at(-1)!.hit.point as LonLat,
      startT: snaps[0].t,
      endT: snaps.at(-1)!.t,
      lengthM,
      path,
    };
    return [matched];
  };
}
