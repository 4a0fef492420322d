import { hash } from "./cell-table.js";

/**
 * Integer ids (below 2^53) to their positions 0..n-1, as an open-addressing
 * table in typed arrays: a look-up is a few array reads in optimised code,
 * where a Map call costs several times that (the trip scan resolves ~90
 * path steps per trip).
 */
export class IdIndex {
  private readonly keys: Float64Array;
  /** Position + 1 per slot; 0 = empty. */
  private readonly values: Int32Array;
  private readonly mask: number;

  constructor(ids: ArrayLike<number>) {
    let size = 16;
    while (size < ids.length * 2) size *= 2;
    this.keys = new Float64Array(size);
    this.values = new Int32Array(size);
    this.mask = size - 1;
    for (let i = 0; i < ids.length; i++) {
      let slot = hash(ids[i]) & this.mask;
      while (this.values[slot] !== 0 && this.keys[slot] !== ids[i]) slot = (slot + 1) & this.mask;
      this.keys[slot] = ids[i];
      this.values[slot] = i + 1;
    }
  }

  /** Position of the id (the last, if listed twice, as a Map filled in order), or -1. */
  indexOf(id: number): number {
    for (let slot = hash(id) & this.mask; ; slot = (slot + 1) & this.mask) {
      const value = this.values[slot];
      if (value === 0 || this.keys[slot] === id) return value - 1;
    }
  }
}
