/**
 * Whole numbers (0 … 2^53) → dense slots 0, 1, 2 … in the order first asked: an open-addressing table over
 * typed arrays. Segment ids are way id × 10,000 + piece (about 4e12), which a JS Map hashes as heap numbers:
 * the tally loop asked such a Map twice per path step and spent more there than on the counting.
 */
export class NumberIndex {
  private keys: Float64Array;
  /** Slot + 1 of each key; 0 marks an empty place. */
  private slots: Int32Array;
  private shift: number;
  private count = 0;

  constructor(bits = 10) {
    this.keys = new Float64Array(1 << bits);
    this.slots = new Int32Array(1 << bits);
    this.shift = 32 - bits;
  }

  get size(): number {
    return this.count;
  }

  /** The key's slot, a new one (= the size before) when the key is new. */
  slotOf(key: number): number {
    const mask = this.slots.length - 1;
    for (let at = this.placeOf(key); ; at = (at + 1) & mask) {
      const slot = this.slots[at];
      if (slot === 0) return this.insertAt(at, key);
      if (this.keys[at] === key) return slot - 1;
    }
  }

  /** The key's slot, or -1 when it was never asked. */
  find(key: number): number {
    const mask = this.slots.length - 1;
    for (let at = this.placeOf(key); ; at = (at + 1) & mask) {
      const slot = this.slots[at];
      if (slot === 0) return -1;
      if (this.keys[at] === key) return slot - 1;
    }
  }

  clear(): void {
    this.slots.fill(0);
    this.count = 0;
  }

  /** Fibonacci hashing of the low 32 bits mixed with the high ones (ToUint32 takes a whole number mod 2^32). */
  private placeOf(key: number): number {
    const high = (key / 4294967296) >>> 0;
    return Math.imul((key >>> 0) ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) >>> this.shift;
  }

  private insertAt(at: number, key: number): number {
    const slot = this.count++;
    this.keys[at] = key;
    this.slots[at] = slot + 1;
    // At most half full, so probes stay short.
    if (2 * this.count > this.slots.length) this.grow();
    return slot;
  }

  private grow(): void {
    const [keys, slots] = [this.keys, this.slots];
    this.keys = new Float64Array(2 * keys.length);
    this.slots = new Int32Array(2 * slots.length);
    this.shift--;
    const mask = this.slots.length - 1;
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] === 0) continue;
      let at = this.placeOf(keys[i]);
      while (this.slots[at] !== 0) at = (at + 1) & mask;
      this.keys[at] = keys[i];
      this.slots[at] = slots[i];
    }
  }
}
