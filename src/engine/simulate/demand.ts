import type { AccessMode } from "../network/network.js";
import type { VehicleClass } from "../trips/types.js";
import { anchorOn, usableWeights, type Anchor, type Landscape } from "./population.js";
import { cumulativeOf, Rng } from "./rng.js";

export type DayType = "weekday" | "weekend";

/**
 * Relative departures per hour of day (0..23, UTC). Personal weekday: AM and
 * PM peaks; commercial: a broad working-day plateau; weekend: late-morning peak.
 */
const PERSONAL_WEEKDAY = [
  0.3, 0.2, 0.1, 0.1, 0.2, 0.6, 2, 5.5, 7.5, 5, 4, 4.5, 5.5, 5, 4.5, 5, 6.5, 8, 7, 5, 3.5, 2.5, 1.5, 0.8,
];
const PERSONAL_WEEKEND = [
  0.8, 0.6, 0.4, 0.2, 0.2, 0.3, 0.7, 1.5, 3, 5, 6.5, 7, 6.5, 6, 5.5, 5.5, 5.5, 5.5, 5, 4.5, 3.5, 2.5, 1.8,
  1.2,
];
const COMMERCIAL_WEEKDAY = [
  0.2, 0.2, 0.2, 0.3, 0.8, 2, 4.5, 6.5, 7.5, 8, 8, 7.5, 6.5, 7, 7, 6.5, 5, 3.5, 2, 1, 0.6, 0.4, 0.3, 0.2,
];
const COMMERCIAL_WEEKEND = [
  0.2, 0.2, 0.2, 0.2, 0.4, 1, 2, 3.5, 5, 6, 6.5, 6.5, 6, 5, 4.5, 4, 3, 2, 1.5, 1, 0.6, 0.4, 0.3, 0.2,
];
const WALK_WEEKDAY = [
  0.2, 0.1, 0.1, 0.1, 0.1, 0.3, 1, 4, 6, 4.5, 4.5, 5.5, 7, 6.5, 5, 5, 5.5, 6.5, 5.5, 4, 3, 2, 1, 0.5,
];

const PROFILES: Record<VehicleClass, Record<DayType, number[]>> = {
  personal: { weekday: PERSONAL_WEEKDAY, weekend: PERSONAL_WEEKEND },
  medium_commercial: { weekday: COMMERCIAL_WEEKDAY, weekend: COMMERCIAL_WEEKEND },
  heavy_commercial: { weekday: COMMERCIAL_WEEKDAY, weekend: COMMERCIAL_WEEKEND },
  bicycle: { weekday: PERSONAL_WEEKDAY, weekend: PERSONAL_WEEKEND },
  pedestrian: { weekday: WALK_WEEKDAY, weekend: PERSONAL_WEEKEND },
  // Transit riders (transit.ts) travel like commuters.
  bus: { weekday: PERSONAL_WEEKDAY, weekend: PERSONAL_WEEKEND },
  rail: { weekday: PERSONAL_WEEKDAY, weekend: PERSONAL_WEEKEND },
};
const PROFILE_CUMULATIVE = Object.fromEntries(
  Object.entries(PROFILES).map(([c, p]) => [
    c,
    { weekday: cumulativeOf(p.weekday), weekend: cumulativeOf(p.weekend) },
  ]),
) as Record<VehicleClass, Record<DayType, Float64Array>>;

/** Weekend-day trips relative to a weekday: commercial traffic mostly stops, walking does not. */
const WEEKEND_RATIO: Record<VehicleClass, number> = {
  personal: 0.75,
  medium_commercial: 0.3,
  heavy_commercial: 0.25,
  bicycle: 0.9,
  pedestrian: 1,
  bus: 0.6,
  rail: 0.6,
};

export function diurnalProfile(vehicleClass: VehicleClass, day: DayType): readonly number[] {
  return PROFILES[vehicleClass][day];
}

export function dayTypeOf(dayStartMs: number): DayType {
  const dow = new Date(dayStartMs).getUTCDay();
  return dow === 0 || dow === 6 ? "weekend" : "weekday";
}

/** Factor on the average daily rate so five weekdays and two weekend days average to 1. */
export function dayFactor(vehicleClass: VehicleClass, day: DayType): number {
  const r = WEEKEND_RATIO[vehicleClass];
  const weekday = 7 / (5 + 2 * r);
  return day === "weekday" ? weekday : r * weekday;
}

/** Seconds after midnight of one departure drawn from the class's profile for the day type. */
export function departureSecond(vehicleClass: VehicleClass, day: DayType, rng: Rng): number {
  return (rng.pick(PROFILE_CUMULATIVE[vehicleClass][day]) + rng.next()) * 3600;
}

// ---- destination choice ------------------------------------------------------------------------------

/** Distance decay exponent γ of the gravity model: walkers and cyclists go nearer. */
const GAMMA: Record<VehicleClass, number> = {
  personal: 1.5,
  medium_commercial: 1,
  heavy_commercial: 0.8,
  bicycle: 2.2,
  pedestrian: 3,
  bus: 1.5,
  rail: 1.5,
};
/** Below this distance the decay is flat, so the nearest places do not dominate. */
const GRAVITY_FLOOR_M = 250;

/**
 * A fixed set of attractors (shops, services, customers) per mode, drawn by
 * attraction. Reusing them as origins keeps the number of shortest-path trees small.
 */
export class Destinations {
  private readonly byMode = new Map<AccessMode, Anchor[]>();

  constructor(
    private readonly land: Landscape,
    private readonly seed: number,
  ) {}

  of(mode: AccessMode): Anchor[] {
    let list = this.byMode.get(mode);
    if (!list) this.byMode.set(mode, (list = this.draw(mode)));
    return list;
  }

  private draw(mode: AccessMode): Anchor[] {
    const weights = usableWeights(this.land, this.land.attraction, mode);
    const usableCount = weights.reduce((n, w) => n + (w > 0 ? 1 : 0), 0);
    const count = Math.min(1000, Math.max(20, Math.round(6 * Math.sqrt(usableCount))));
    const cum = cumulativeOf(weights);
    // A stream per mode: the sets do not depend on which mode is asked for first.
    const rng = new Rng(this.seed, "destinations", mode);
    return Array.from({ length: count }, () => anchorOn(this.land, rng.pick(cum), rng));
  }
}

/**
 * Gravity model: attractor j with probability ∝ 1 / max(d, floor)^γ (their
 * attraction is already in how densely they were drawn). Trips start at a
 * limited set of anchors, so each origin's weights are computed once.
 */
export class GravityModel {
  private readonly cache = new Map<string, Float64Array>();

  constructor(private readonly land: Landscape) {}

  pick(from: Anchor, candidates: Anchor[], vehicleClass: VehicleClass, rng: Rng): Anchor {
    const key = `${vehicleClass}:${from.segmentIndex}:${from.fraction}`;
    let cum = this.cache.get(key);
    if (!cum) {
      const gamma = GAMMA[vehicleClass];
      const ruler = this.land.network.ruler;
      cum = cumulativeOf(
        candidates.map(
          (c) => 1 / Math.pow(Math.max(GRAVITY_FLOOR_M, ruler.distance(from.point, c.point)), gamma),
        ),
      );
      if (this.cache.size >= 5000) this.cache.clear(); // bounds memory on huge populations
      this.cache.set(key, cum);
    }
    return candidates[rng.pick(cum)];
  }
}
