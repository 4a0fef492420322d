import { Network } from "../../src/engine/network/network.js";
import type { LonLat, Segment } from "../../src/engine/network/types.js";
import type { GpsPoint, RawTrip } from "../../src/engine/trips/types.js";
import { at, seg } from "./network.js";

/** Hand-built networks in local metres around Monaco (test/helpers/network.ts's ORIGIN). */
export type XY = [number, number];

export function lonLatOf([x, y]: XY): LonLat {
  return at(x, y);
}

export interface RoadSpec {
  wayId: number;
  index?: number;
  /** Junction ids of the first and last vertex. */
  from: number;
  to: number;
  xy: XY[];
  oneway?: boolean;
  speedKph?: number;
}

export function roadOf(spec: RoadSpec): Segment {
  return seg(spec.wayId, spec.index ?? 0, spec.from, spec.to, spec.xy, {
    oneway: spec.oneway ?? false,
    speedKph: spec.speedKph ?? 50,
    name: null,
  });
}

export function networkOf(specs: RoadSpec[]): Network {
  return new Network("test", specs.map(roadOf));
}

/** Deterministic standard-normal noise (mulberry32 + Box–Muller). */
export function gaussianSource(seed: number): () => number {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** A car trip through `xy` points, one fix every `stepS` seconds from t = 0. */
export function tripOf(xy: XY[], stepS = 10, t0 = Date.UTC(2026, 0, 5, 8)): RawTrip {
  const points: GpsPoint[] = xy.map((p, i) => {
    const [lon, lat] = lonLatOf(p);
    return { lon, lat, t: t0 + i * stepS * 1000 };
  });
  return { deviceId: "dev-1", vehicleClass: "personal", source: "telematics", points };
}
