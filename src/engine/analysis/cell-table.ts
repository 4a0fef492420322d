/**
 * Sums keyed by non-negative integers below 2^53, in typed arrays: an
 * open-addressing hash from key to a dense entry index, and per entry the summed
 * weight, the number of additions (sample) and a summed duration. Millions of
 * cells cost ~30 bytes each instead of a Map entry plus an object.
 */
export class CellTable {
  size = 0;
  keys: Float64Array;
  weight: Float64Array;
  sample: Uint32Array;
  durationS: Float64Array;
  /** Entry index + 1 per hash slot; 0 = empty. Capacity is a power of two, at most half full. */
  private slots: Int32Array;
  private mask: number;

  constructor(capacity = 1024) {
    const entries = Math.max(16, capacity);
    this.keys = new Float64Array(entries);
    this.weight = new Float64Array(entries);
    this.sample = new Uint32Array(entries);
    this.durationS = new Float64Array(entries);
    let slots = 32;
    while (slots < entries * 2) slots *= 2;
    this.slots = new Int32Array(slots);
    this.mask = slots - 1;
  }

  /** Adds one sampled trip of `weight` and `durationS` to the key's cell. */
  add(key: number, weight: number, durationS: number): void {
    const i = this.entryOf(key);
    this.weight[i] += weight;
    this.sample[i]++;
    this.durationS[i] += durationS;
  }

  /** Entry index of the key, or -1. */
  indexOf(key: number): number {
    for (let slot = hash(key) & this.mask; ; slot = (slot + 1) & this.mask) {
      const entry = this.slots[slot];
      if (entry === 0) return -1;
      if (this.keys[entry - 1] === key) return entry - 1;
    }
  }

  /** Summed weight of the key, 0 when absent. */
  weightOf(key: number): number {
    const i = this.indexOf(key);
    return i < 0 ? 0 : this.weight[i];
  }

  /** The keys present, ascending. */
  sortedKeys(): Float64Array {
    return this.keys.slice(0, this.size).sort();
  }

  /** The entry of the key, created (zeroed) when absent. */
  private entryOf(key: number): number {
    let slot = hash(key) & this.mask;
    for (;;) {
      const entry = this.slots[slot];
      if (entry === 0) break;
      if (this.keys[entry - 1] === key) return entry - 1;
      slot = (slot + 1) & this.mask;
    }
    if (this.size === this.keys.length) this.growEntries();
    const i = this.size++;
    this.keys[i] = key;
    this.slots[slot] = i + 1;
    if (this.size * 2 > this.slots.length) this.rehash();
    return i;
  }

  private growEntries(): void {
    const n = this.keys.length * 2;
    this.keys = grown(this.keys, n);
    this.weight = grown(this.weight, n);
    this.sample = grown(this.sample, n);
    this.durationS = grown(this.durationS, n);
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    this.mask = this.slots.length - 1;
    for (let i = 0; i < this.size; i++) {
      let slot = hash(this.keys[i]) & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = i + 1;
    }
  }
}

function grown<T extends Float64Array | Uint32Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/** Mixes both 32-bit halves of an integer key below 2^53 (murmur3's finaliser). */
export function hash(key: number): number {
  let h = (key >>> 0) ^ Math.imul(Math.floor(key / 4294967296), 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
