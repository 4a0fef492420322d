import type { Network } from "../network/network.js";
import { accessModeOf, type GpsPoint, type MatchedTrip, type RawTrip } from "../trips/types.js";
import { assemblePath, type MatchedPosition } from "./assemble-path.js";
import { candidatesOf, emissionLogProb, type Step } from "./candidates.js";
import { matchContextOf, type MatchContext } from "./context.js";
import { resolveOptions, type MatchOptions, type ResolvedMatchOptions } from "./options.js";
import { doubleRow } from "./rows.js";
import { transitionLogProbs } from "./transitions.js";
import {
  advanceLattice,
  dropLastStep,
  mostLikelySequence,
  restoreStep,
  startLattice,
  type Lattice,
  type LatticeStep,
} from "./viterbi.js";

export { DEFAULT_MATCH_OPTIONS, type MatchOptions } from "./options.js";
export { routeMismatchFraction, endpointErrorM } from "./accuracy.js";
export { matchedLine } from "./geometry.js";

/**
 * Hidden-Markov-model map matching (Newson & Krumm 2009). Points closer than
 * 2σ to the previously kept one are dropped as stationary noise. The trip is
 * split where a fix has no road within the search radius, where no candidate
 * is reachable from the previous step, or where fixes are further apart in
 * time than `maxTimeGapS`; every piece with at least two fixes that moves
 * along the network becomes one MatchedTrip.
 */
/** A matcher bound to one network, in the shape the ingest pipeline takes. */
export function tripMatcher(network: Network, opts?: MatchOptions): (trip: RawTrip) => MatchedTrip[] {
  return (trip) => matchTrip(network, trip, opts);
}

export function matchTrip(network: Network, trip: RawTrip, opts?: MatchOptions): MatchedTrip[] {
  const o = resolveOptions(opts);
  const ctx = matchContextOf(network, accessModeOf(trip.vehicleClass), o.slowRoadPenalty);
  const points = sortedByTime(trip.points);
  const trips: MatchedTrip[] = [];
  // No closures here: a fresh closure per trip is a new call target, which cost recompilations.
  let lattice: Lattice | null = null;
  // A fix the piece could not be extended to, held back for one fix (HeldFix).
  let held: HeldFix | null = null;
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (lattice && i > 0 && p.t - points[i - 1].t > o.maxTimeGapS * 1000) {
      closePiece(ctx, lattice, trip, o, trips);
      lattice = null;
      held = null;
    }
    if (lattice && isStationary(ctx, lattice, p, o)) continue;
    const step = stepOf(ctx, p, i, o);
    if (step.candidates.length === 0) {
      if (lattice) closePiece(ctx, lattice, trip, o, trips);
      lattice = null;
      held = null;
      continue;
    }
    const emissions = emissionsOf(step, o);
    if (lattice) {
      // The previous fix may be the stray one.
      if (
        extend(ctx, lattice, step, emissions, o) ||
        extendPastStrayFix(ctx, lattice, [{ step, emissions }], o, 1, 1)
      ) {
        held = null;
        continue;
      }
      if (held === null) {
        held = { step, emissions };
        continue;
      }
      // Before the trip breaks at the held fix: a stray fix further back (the last alone was tried as
      // each fix came).
      if (extendPastStrayFix(ctx, lattice, [held, { step, emissions }], o, 2, STRAY_LOOKBACK)) {
        held = null;
        continue;
      }
      // Neither the held fix nor this one continues the piece: the trip breaks at the held fix.
      closePiece(ctx, lattice, trip, o, trips);
      lattice = startLattice(held.step, held.emissions);
      held = null;
      if (extend(ctx, lattice, step, emissions, o)) continue;
      closePiece(ctx, lattice, trip, o, trips);
    }
    lattice = startLattice(step, emissions);
  }
  if (lattice) closePiece(ctx, lattice, trip, o, trips);
  return trips;
}

/**
 * A fix that no candidate of the piece's last step reaches, even past a stray previous fix, is held
 * back: when the next fix extends the piece, the held one was the stray (noise, or a fix whose nearest
 * roads all lie above or below the driven one, as in Monaco's tunnels and viaducts, so that the driven
 * road is not among its candidates) and is left out, as stationary fixes are. Otherwise the trip breaks
 * at the held fix, as it always did.
 */
interface HeldFix {
  step: Step;
  emissions: number[];
}

/** Decodes a finished piece of at least two steps into `trips`. */
function closePiece(
  ctx: MatchContext,
  lattice: Lattice,
  trip: RawTrip,
  o: ResolvedMatchOptions,
  trips: MatchedTrip[],
): void {
  if (lattice.steps.length < 2) return;
  const matched = decodePiece(ctx, lattice, trip, o);
  if (matched) trips.push(matched);
}

function extend(
  ctx: MatchContext,
  lattice: Lattice,
  step: Step,
  emissions: number[],
  o: ResolvedMatchOptions,
): boolean {
  const prev = lattice.steps[lattice.steps.length - 1];
  const lastScores = lattice.scores[lattice.scores.length - 1];
  return advanceLattice(lattice, step, emissions, transitionLogProbs(ctx, prev, step, lastScores, o));
}

/** How many of the piece's last fixes a break looks back over for one stray fix to leave out. */
const STRAY_LOOKBACK = 4;

/**
 * Links `later` to the piece past one stray fix, its `fromBack`-th last, else the next one further
 * back up to its `toBack`-th last; keeps the piece as it was when none of them does it. A stray fix
 * is noise that put it nearer to other roads than the driven one: it crowds the driven road out of
 * its candidates (e.g. beside a bundle of oneway ramps), or it led the piece onto a road the vehicle
 * never took, whose next fixes then matched onto it far from them until nothing continued it. The
 * fixes after the one left out are linked again before `later`.
 */
function extendPastStrayFix(
  ctx: MatchContext,
  lattice: Lattice,
  later: HeldFix[],
  o: ResolvedMatchOptions,
  fromBack: number,
  toBack: number,
): boolean {
  for (let back = fromBack; back <= toBack && back < lattice.steps.length; back++) {
    const taken: LatticeStep[] = [];
    for (let k = 0; k < back; k++) taken.unshift(dropLastStep(lattice));
    const again = taken.slice(1).map((t) => ({ step: t.step, emissions: emissionsOf(t.step, o) }));
    again.push(...later);
    let linked = 0;
    while (linked < again.length && extend(ctx, lattice, again[linked].step, again[linked].emissions, o))
      linked++;
    if (linked === again.length) return true;
    for (; linked > 0; linked--) dropLastStep(lattice);
    for (const t of taken) restoreStep(lattice, t);
  }
  return false;
}

function sortedByTime(points: GpsPoint[]): GpsPoint[] {
  for (let i = 1; i < points.length; i++) {
    if (points[i].t < points[i - 1].t) return [...points].sort((a, b) => a.t - b.t);
  }
  return points;
}

/** Within 2σ of the last kept fix: indistinguishable from standing still (Newson & Krumm's filter). */
function isStationary(ctx: MatchContext, lattice: Lattice, p: GpsPoint, o: ResolvedMatchOptions): boolean {
  const last = lattice.steps[lattice.steps.length - 1].position;
  return ctx.network.ruler.distance(last, [p.lon, p.lat]) < 2 * o.sigmaM;
}

/** A step's emission log-probabilities (a step taken off the lattice needs them again: its scores add the transitions). */
function emissionsOf(step: Step, o: ResolvedMatchOptions): number[] {
  const emissions = doubleRow();
  for (let c = 0; c < step.candidates.length; c++)
    emissions.push(emissionLogProb(step.candidates[c], o.sigmaM));
  return emissions;
}

function stepOf(ctx: MatchContext, p: GpsPoint, pointIndex: number, o: ResolvedMatchOptions): Step {
  return { pointIndex, t: p.t, position: [p.lon, p.lat], candidates: candidatesOf(ctx, p, o) };
}

function decodePiece(
  ctx: MatchContext,
  lattice: Lattice,
  trip: RawTrip,
  o: ResolvedMatchOptions,
): MatchedTrip | null {
  const chosen = mostLikelySequence(lattice);
  const positions: MatchedPosition[] = [];
  for (let k = 0; k < lattice.steps.length; k++) {
    const step = lattice.steps[k];
    positions.push({ candidate: step.candidates[chosen[k]], t: step.t });
  }
  const assembled = assemblePath(ctx, positions, o.backwardToleranceM);
  if (!assembled) return null;
  const matched: MatchedTrip = {
    deviceId: trip.deviceId,
    vehicleClass: trip.vehicleClass,
    source: trip.source,
    ...assembled,
  };
  if (trip.purpose !== undefined) matched.purpose = trip.purpose;
  if (trip.incomeBand !== undefined) matched.incomeBand = trip.incomeBand;
  return matched;
}
