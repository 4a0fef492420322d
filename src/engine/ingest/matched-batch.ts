import type { MatchedTrip, PathStep } from "../trips/types.js";

/**
 * Matched trips waiting for their store transaction, their path steps kept in typed-array columns until
 * then. A batch fills over seconds of matching: as objects, its ~40 steps a trip (an object and three
 * heap numbers each) outlived every young-generation collection meanwhile, were copied twice and grew
 * the old generation, whose growth set off marking of the whole heap (network included) on V8's helper
 * threads: the single-threaded ingest spent 0.2–0.3 s of CPU there per 4,000 trips, the matcher alone
 * none.
 */
export class MatchedTripBatch {
  private readonly heads: MatchedTrip[] = [];
  /** Steps of trip i: pathStart[i] … pathStart[i + 1]. */
  private readonly pathStart: number[] = [0];
  private segmentId = new Float64Array(1024);
  private forward = new Uint8Array(1024);
  private enterT = new Float64Array(1024);
  private exitT = new Float64Array(1024);

  get length(): number {
    return this.heads.length;
  }

  /** Takes `trip` over: its path moves into the columns until `take` gives it back. */
  push(trip: MatchedTrip): void {
    let at = this.pathStart[this.heads.length];
    this.reserve(at + trip.path.length);
    for (const step of trip.path) {
      this.segmentId[at] = step.segmentId;
      this.forward[at] = step.forward ? 1 : 0;
      this.enterT[at] = step.enterT;
      this.exitT[at] = step.exitT;
      at++;
    }
    trip.path = NO_PATH;
    this.heads.push(trip);
    this.pathStart.push(at);
  }

  /**
   * The trips in the order pushed; the batch is spent. Each read of a trip's `path` builds its steps
   * afresh (equal to those pushed), so read it once per use: the store goes through the trips one at a
   * time, and steps built per trip die young, where the whole batch's steps built at once (166,000 for
   * 4,000 trips) outlived a collection during the store transaction and were copied into the old generation.
   */
  take(): MatchedTrip[] {
    this.heads.forEach((trip, i) =>
      Object.defineProperty(trip, "path", {
        get: () => this.stepsOf(i),
        enumerable: true,
        configurable: true,
      }),
    );
    return this.heads;
  }

  private stepsOf(i: number): PathStep[] {
    const path: PathStep[] = [];
    for (let k = this.pathStart[i]; k < this.pathStart[i + 1]; k++)
      path.push({
        segmentId: this.segmentId[k],
        forward: this.forward[k] === 1,
        enterT: this.enterT[k],
        exitT: this.exitT[k],
      });
    return path;
  }

  private reserve(steps: number): void {
    if (steps <= this.segmentId.length) return;
    const size = Math.max(steps, 2 * this.segmentId.length);
    const grown = <T extends Float64Array | Uint8Array>(a: T, Type: new (n: number) => T): T => {
      const b = new Type(size);
      b.set(a);
      return b;
    };
    this.segmentId = grown(this.segmentId, Float64Array);
    this.forward = grown(this.forward, Uint8Array);
    this.enterT = grown(this.enterT, Float64Array);
    this.exitT = grown(this.exitT, Float64Array);
  }
}

/** The path of a trip held in a batch (never read: `take` puts the real one back). */
const NO_PATH: PathStep[] = Object.freeze([]) as unknown as PathStep[];
