import CheapRuler from "cheap-ruler";
import { Network } from "../../src/engine/network/network.js";
import {
  ACCESS_BIKE,
  ACCESS_CAR,
  ACCESS_FOOT,
  segmentIdOf,
  type LonLat,
  type Segment,
} from "../../src/engine/network/types.js";
import type { GpsPoint, RawTrip } from "../../src/engine/trips/types.js";

/** Hand-built networks in local metres around Monaco (43.73 N, 7.42 E). */
const ORIGIN: LonLat = [7.42, 43.73];
const ruler = new CheapRuler(ORIGIN[1], "meters");

export type XY = [number, number];

export function lonLatOf([x, y]: XY): LonLat {
  return ruler.offset(ORIGIN, x, y) as LonLat;
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
  const coords = spec.xy.map(lonLatOf);
  const index = spec.index ?? 0;
  return {
    id: segmentIdOf(spec.wayId, index),
    wayId: spec.wayId,
    index,
    roadClass: "residential",
    highway: "residential",
    roadType: "Local",
    oneway: spec.oneway ?? false,
    speedKph: spec.speedKph ?? 50,
    name: null,
    lengthM: ruler.lineDistance(coords),
    fromNode: spec.from,
    toNode: spec.to,
    access: ACCESS_CAR | ACCESS_BIKE | ACCESS_FOOT,
    coords,
  };
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
