import type { Step } from "./candidates.js";
import { doubleRow } from "./rows.js";

/**
 * Viterbi lattice of one trip piece: per step, each candidate's best log score and its predecessor.
 * Plain arrays: a few short ones per GPS point, and allocating small typed arrays cost several times more.
 */
export interface Lattice {
  steps: Step[];
  scores: number[][];
  back: number[][];
}

export function startLattice(step: Step, emissions: number[]): Lattice {
  const back: number[] = [];
  for (let j = 0; j < emissions.length; j++) back.push(-1);
  return { steps: [step], scores: [emissions], back: [back] };
}

/**
 * Extends the lattice by one step. Returns false, leaving the lattice
 * unchanged, when no candidate of `step` can be reached from any live
 * candidate of the previous step: the caller then breaks the trip.
 */
export function advanceLattice(
  lattice: Lattice,
  step: Step,
  emissions: number[],
  transitions: Float64Array,
): boolean {
  const prevScores = lattice.scores[lattice.scores.length - 1];
  const nNext = emissions.length;
  const scores = doubleRow();
  const back: number[] = [];
  let reachable = false;
  for (let j = 0; j < nNext; j++) {
    let best = -Infinity;
    let from = -1;
    for (let i = 0; i < prevScores.length; i++) {
      const s = prevScores[i] + transitions[i * nNext + j];
      if (s > best) {
        best = s;
        from = i;
      }
    }
    if (from >= 0) {
      best += emissions[j];
      reachable = true;
    }
    scores.push(best);
    back.push(from);
  }
  if (!reachable) return false;
  lattice.steps.push(step);
  lattice.scores.push(scores);
  lattice.back.push(back);
  return true;
}

/** One step of a lattice with its scores and back pointers, as taken off by `dropLastStep`. */
export interface LatticeStep {
  step: Step;
  scores: number[];
  back: number[];
}

export function dropLastStep(lattice: Lattice): LatticeStep {
  return { step: lattice.steps.pop()!, scores: lattice.scores.pop()!, back: lattice.back.pop()! };
}

export function restoreStep(lattice: Lattice, dropped: LatticeStep): void {
  lattice.steps.push(dropped.step);
  lattice.scores.push(dropped.scores);
  lattice.back.push(dropped.back);
}

/** Candidate index per step along the most likely sequence (ties go to the lower index: deterministic). */
export function mostLikelySequence(lattice: Lattice): number[] {
  const last = lattice.scores.length - 1;
  let best = 0;
  const finalScores = lattice.scores[last];
  for (let j = 1; j < finalScores.length; j++) if (finalScores[j] > finalScores[best]) best = j;
  const chosen = new Array<number>(lattice.scores.length);
  for (let k = last; k >= 0; k--) {
    chosen[k] = best;
    best = lattice.back[k][best];
  }
  return chosen;
}
