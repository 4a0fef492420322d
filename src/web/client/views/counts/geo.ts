/** Small geometry helpers of the counts explorer (no DOM, no map library). */
import type { LonLat } from "./query.js";

const EARTH_RADIUS_M = 6_371_008.8;

/** A circle of `radiusM` around `centre` as a closed ring of `steps` + 1 positions (spherical offsets). */
export function circleRing(centre: LonLat, radiusM: number, steps = 64): LonLat[] {
  const [lon, lat] = centre;
  const dLat = (radiusM / EARTH_RADIUS_M) * (180 / Math.PI);
  const dLon = dLat / Math.cos((lat * Math.PI) / 180);
  const ring: LonLat[] = [];
  for (let i = 0; i <= steps; i++) {
    const a = (2 * Math.PI * (i % steps)) / steps;
    ring.push([lon + dLon * Math.cos(a), lat + dLat * Math.sin(a)]);
  }
  return ring;
}

/** [west, south, east, north] around a circle. */
export function circleBbox(centre: LonLat, radiusM: number): [number, number, number, number] {
  const ring = circleRing(centre, radiusM, 4);
  const lons = ring.map((p) => p[0]);
  const lats = ring.map((p) => p[1]);
  return [Math.min(...lons), Math.min(...lats), Math.max(...lons), Math.max(...lats)];
}
