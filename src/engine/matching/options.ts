/** Tuning of the HMM map matcher; every field has a default (see `DEFAULT_MATCH_OPTIONS`). */
export interface MatchOptions {
  /** Road candidates are searched within this many metres of each GPS point. */
  searchRadiusM?: number;
  /** Candidates at most at this many nearest places per point (a junction is one place; each spot gives one or two directed candidates). */
  maxCandidates?: number;
  /** GPS noise: standard deviation (m) of the Gaussian emission; also sets the stationary filter (2σ). */
  sigmaM?: number;
  /**
   * Transition scale β(Δt) = max(betaMinM, betaPerSecondM × Δt seconds): the exponential's mean of
   * |route distance − great-circle distance|, which grows with the sampling interval.
   */
  betaPerSecondM?: number;
  betaMinM?: number;
  /** Routes longer than the straight line by more than this many β are not searched (probability e^-n). */
  maxDetourBetas?: number;
  /** A step back along the same segment up to this many metres is noise of a slow vehicle: no move. */
  backwardToleranceM?: number;
  /** Extra metres charged to a route that turns back on the segment it just travelled. */
  uTurnPenaltyM?: number;
  /** Routes are searched up to max(minRouteBoundM, routeBoundFactor × great-circle + routeBoundSlackM)… */
  minRouteBoundM?: number;
  routeBoundFactor?: number;
  routeBoundSlackM?: number;
  /**
   * …or, when that reaches none of the roads nearest the fix, up to Δt × this speed: a vehicle out of
   * sight for minutes may have driven a loop or a hairpin road that ends near where it was last seen…
   */
  gapRouteSpeedMps?: number;
  /** …and no further than the vehicle could go: Δt × maxSpeedMps + 2 × searchRadiusM (when Δt > 0). */
  maxSpeedMps?: number;
  /** Consecutive fixes further apart in time than this split the trip. */
  maxTimeGapS?: number;
  /**
   * Road-speed prior for cars: a road of speed v < 50 km/h costs its length × (1 + p × (50 − v) / 50)
   * in the route distance of the transition (0 turns the prior off).
   */
  slowRoadPenalty?: number;
}

export type ResolvedMatchOptions = Required<MatchOptions>;

export const DEFAULT_MATCH_OPTIONS: ResolvedMatchOptions = {
  searchRadiusM: 50,
  maxCandidates: 8,
  sigmaM: 10,
  betaPerSecondM: 0.5,
  betaMinM: 5,
  uTurnPenaltyM: 50,
  backwardToleranceM: 40,
  maxDetourBetas: 50,
  minRouteBoundM: 2000,
  routeBoundFactor: 4,
  routeBoundSlackM: 500,
  gapRouteSpeedMps: 15,
  maxSpeedMps: 55,
  maxTimeGapS: 300,
  slowRoadPenalty: 2,
};

/**
 * The defaults, resolved once: a trip matched without options gets this one object. A fresh spread
 * per trip took one hidden class while the spread's inline cache was cold and another after, and code
 * optimised on the first was thrown away mid pass (`candidatesOf`, `transitionLogProbs`, `recordGroup`).
 */
const RESOLVED_DEFAULTS: ResolvedMatchOptions = Object.freeze({ ...DEFAULT_MATCH_OPTIONS });

export function resolveOptions(opts?: MatchOptions): ResolvedMatchOptions {
  if (opts === undefined) return RESOLVED_DEFAULTS;
  const resolved = { ...DEFAULT_MATCH_OPTIONS };
  for (const [k, v] of Object.entries(opts) as [keyof MatchOptions, number | undefined][]) {
    if (v !== undefined) resolved[k] = v;
  }
  return resolved;
}
