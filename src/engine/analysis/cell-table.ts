/**
 * Sums keyed by non-negative integers below 2^53, in one typed array: open
 * addressing over records of [key, weight, durationS, sample] (an empty slot
 * has key -1), so adding to a cell touches one cache line. A million cells cost
 * ~50 bytes each instead of a Map entry plus an object.
 *
 * A key is `group × stride + member`: the members of one group start probing
 * in one region of 64 slots (2 KB), so the ~10 cells one trip adds to for one
 * zone pair (its day types, parts and device groups) share a memory page
 * instead of each costing a cache and TLB miss.
 */
export class CellTable {
  size = 0;
  private records: Float64Array;
  private mask: number;

  constructor(
    capacity = 1024,
    private readonly stride = 1,
  ) {
    let slots = 64;
    while (slots * MAX_LOAD < capacity) slots *= 2;
    this.records = emptyRecords(slots);
    this.mask = slots - 1;
  }

  /** Adds one sampled trip of `weight` and `durationS` to the key's cell. */
  add(key: number, weight: number, durationS: number): void {
    const group = this.groupOf(key);
    this.addTo(group, key - group * this.stride, weight, durationS);
  }

  /** add() of the key group × stride + member. */
  addTo(group: number, member: number, weight: number, durationS: number): void {
    const r = this.recordOf(group, member);
    this.records[r + 1] += weight;
    this.records[r + 2] += durationS;
    this.records[r + 3]++;
  }

  /** Record index of the key (for weightAt, durationAt, sampleAt), or -1. */
  indexOf(key: number): number {
    const group = this.groupOf(key);
    for (let slot = this.home(group, key - group * this.stride); ; slot = (slot + 1) & this.mask) {
      const k = this.records[slot * RECORD];
      if (k === key) return slot * RECORD;
      if (k === EMPTY) return -1;
    }
  }

  weightAt(record: number): number {
    return this.records[record + 1];
  }

  durationAt(record: number): number {
    return this.records[record + 2];
  }

  sampleAt(record: number): number {
    return this.records[record + 3];
  }

  /** Summed weight of the key, 0 when absent. */
  weightOf(key: number): number {
    const r = this.indexOf(key);
    return r < 0 ? 0 : this.records[r + 1];
  }

  /** Every record's fields, each a flat array: what a partial aggregate carries to be merged. */
  exportRecords(): CellRecords {
    const out = emptyCellRecords(this.size);
    let n = 0;
    for (let r = 0; r < this.records.length; r += RECORD) {
      if (this.records[r] === EMPTY) continue;
      out.keys[n] = this.records[r];
      out.weights[n] = this.records[r + 1];
      out.durations[n] = this.records[r + 2];
      out.samples[n++] = this.records[r + 3];
    }
    return out;
  }

  /** Grows the table at once to hold `capacity` cells (a merge knows about how many are coming). */
  reserve(capacity: number): void {
    while (MAX_LOAD * (this.mask + 1) < capacity) this.grow();
  }

  /** Adds exported records (of a table with the same stride) to this table's cells; `keep` picks the keys. */
  absorbRecords(from: CellRecords, keep?: (key: number) => boolean): void {
    this.reserve(Math.max(this.size, from.keys.length) * 1.25);
    for (let i = 0; i < from.keys.length; i++) {
      const key = from.keys[i];
      if (keep && !keep(key)) continue;
      const group = this.groupOf(key);
      const r = this.recordOf(group, key - group * this.stride);
      this.records[r + 1] += from.weights[i];
      this.records[r + 2] += from.durations[i];
      this.records[r + 3] += from.samples[i];
    }
  }

  /** The keys present, in no particular order. */
  keys(): Float64Array {
    const keys = new Float64Array(this.size);
    let n = 0;
    for (let r = 0; r < this.records.length; r += RECORD)
      if (this.records[r] !== EMPTY) keys[n++] = this.records[r];
    return keys;
  }

  private groupOf(key: number): number {
    return this.stride === 1 ? key : Math.floor(key / this.stride);
  }

  /** First slot probed for a key: its group's region of 64 slots, at an offset rotated per group. */
  private home(group: number, member: number): number {
    const h = hash(group);
    return ((h << 6) | ((member + (h >>> 26)) & 63)) & this.mask;
  }

  /** The record of the key, created (zeroed) when absent. */
  private recordOf(group: number, member: number): number {
    const key = group * this.stride + member;
    for (;;) {
      for (let slot = this.home(group, member); ; slot = (slot + 1) & this.mask) {
        const r = slot * RECORD;
        const k = this.records[r];
        if (k === key) return r;
        if (k !== EMPTY) continue;
        if (this.size + 1 > MAX_LOAD * (this.mask + 1)) break; // full enough: grow, then look again
        this.records[r] = key;
        this.size++;
        return r;
      }
      this.grow();
    }
  }

  private grow(): void {
    const old = this.records;
    this.records = emptyRecords((this.mask + 1) * 2);
    this.mask = this.mask * 2 + 1;
    for (let r = 0; r < old.length; r += RECORD) {
      if (old[r] === EMPTY) continue;
      const group = this.groupOf(old[r]);
      let slot = this.home(group, old[r] - group * this.stride);
      while (this.records[slot * RECORD] !== EMPTY) slot = (slot + 1) & this.mask;
      for (let f = 0; f < RECORD; f++) this.records[slot * RECORD + f] = old[r + f];
    }
  }
}

/** A CellTable's records as flat arrays (exportRecords / absorbRecords). */
export interface CellRecords {
  keys: Float64Array;
  weights: Float64Array;
  durations: Float64Array;
  samples: Float64Array;
}

/** Records of `size` cells, zeroed. */
export function emptyCellRecords(size: number): CellRecords {
  return {
    keys: new Float64Array(size),
    weights: new Float64Array(size),
    durations: new Float64Array(size),
    samples: new Float64Array(size),
  };
}

/** Several pieces' records as one (the pieces of a partial a merge reads together). */
export function concatCellRecords(pieces: readonly CellRecords[]): CellRecords {
  if (pieces.length === 1) return pieces[0];
  const out = emptyCellRecords(pieces.reduce((n, p) => n + p.keys.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.keys.set(p.keys, at);
    out.weights.set(p.weights, at);
    out.durations.set(p.durations, at);
    out.samples.set(p.samples, at);
    at += p.keys.length;
  }
  return out;
}

/** Entries of one CellLog block: 2^15 of [key, weight, durationMs], 768 KB. */
const LOG_BLOCK_ENTRIES = 1 << 15;
const LOG_ENTRY = 3;

/**
 * Cell additions of one sampled trip each, appended in arrival order, repeated keys and all. A scan's
 * additions land on random cells of a table far larger than the caches (a cache and TLB miss each, and
 * a fresh 64 MB to fault in); appending writes memory in order, in blocks reused by no one else and
 * never copied. Readers that visit every cell anyway (OdSums.forEachCell, sorted by pair) take the
 * entries as they are; sums are exact in any order.
 */
export class CellLog {
  size = 0;
  private readonly blocks: Float64Array[] = [];
  private block = new Float64Array(0);
  private used = 0;

  add(key: number, weight: number, durationMs: number): void {
    if (this.used === this.block.length) this.nextBlock();
    const block = this.block;
    const at = this.used;
    block[at] = key;
    block[at + 1] = weight;
    block[at + 2] = durationMs;
    this.used = at + LOG_ENTRY;
    this.size++;
  }

  /** The entries as records of one sample each. */
  toRecords(): CellRecords {
    const out = emptyCellRecords(this.size);
    let n = 0;
    for (const block of this.blocks) {
      const used = block === this.block ? this.used : block.length;
      for (let at = 0; at < used; at += LOG_ENTRY, n++) {
        out.keys[n] = block[at];
        out.weights[n] = block[at + 1];
        out.durations[n] = block[at + 2];
      }
    }
    out.samples.fill(1);
    return out;
  }

  clear(): void {
    this.blocks.length = 0;
    this.block = new Float64Array(0);
    this.used = 0;
    this.size = 0;
  }

  private nextBlock(): void {
    this.block = new Float64Array(LOG_BLOCK_ENTRIES * LOG_ENTRY);
    this.blocks.push(this.block);
    this.used = 0;
  }
}

const RECORD = 4;
const EMPTY = -1;
/** Largest share of slots in use before the table doubles (linear probing stays short below it). */
const MAX_LOAD = 0.7;

function emptyRecords(slots: number): Float64Array {
  const records = new Float64Array(slots * RECORD);
  for (let r = 0; r < records.length; r += RECORD) records[r] = EMPTY;
  return records;
}

/** Mixes both 32-bit halves of an integer key below 2^53 (murmur3's finaliser). */
export function hash(key: number): number {
  let h = (key >>> 0) ^ Math.imul(Math.floor(key / 4294967296), 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Above this many keys, KeyedSums hashes instead of keeping a dense array (32 MB). */
const DENSE_LIMIT = 1 << 22;

/** Weight sums over keys 0..size-1: a plain array index while that fits, else a CellTable. */
export class KeyedSums {
  private readonly dense: Float64Array | null;
  private readonly sparse: CellTable | null;

  constructor(size: number) {
    this.dense = size <= DENSE_LIMIT ? new Float64Array(size) : null;
    this.sparse = this.dense ? null : new CellTable(1 << 12);
  }

  add(key: number, weight: number): void {
    if (this.dense) this.dense[key] += weight;
    else this.sparse!.add(key, weight, 0);
  }

  get(key: number): number {
    return this.dense ? this.dense[key] : this.sparse!.weightOf(key);
  }

  /** The non-zero sums as key and value arrays (a partial aggregate's totals). */
  exportSums(): { keys: Float64Array; values: Float64Array } {
    if (this.sparse) {
      const { keys, weights } = this.sparse.exportRecords();
      return { keys, values: weights };
    }
    const dense = this.dense!;
    let n = 0;
    for (let k = 0; k < dense.length; k++) if (dense[k] !== 0) n++;
    const keys = new Float64Array(n);
    const values = new Float64Array(n);
    n = 0;
    for (let k = 0; k < dense.length; k++)
      if (dense[k] !== 0) {
        keys[n] = k;
        values[n++] = dense[k];
      }
    return { keys, values };
  }

  /** Adds exported sums to these. */
  absorbSums(from: { keys: Float64Array; values: Float64Array }): void {
    for (let i = 0; i < from.keys.length; i++) this.add(from.keys[i], from.values[i]);
  }
}
