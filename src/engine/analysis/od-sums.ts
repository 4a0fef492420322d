import {
  CellLog,
  CellTable,
  concatCellRecords,
  emptyCellRecords,
  KeyedSums,
  type CellRecords,
} from "./cell-table.js";

/**
 * Device-type groups a trip's group mask has room for (group numbers 0..7): a trip's groups are kept
 * as one bit mask, so all its groups share one cell.
 */
export const GROUP_SLOTS = 8;
/** Group masks: every subset of the GROUP_SLOTS groups. */
const MASKS = 1 << GROUP_SLOTS;
/** ISO weekdays 1..7 (0 unused). */
const WEEKDAYS = 8;

/** How the sums are sliced: day types by weekday, day parts by time slot of the day. */
export interface SumSlicing {
  /** Per ISO weekday (index 0 unused): the day types it counts in. */
  weekdayTypes: readonly (readonly number[])[];
  /** Per time slot of the day: the day parts it counts in. */
  slotParts: readonly (readonly number[])[];
  dayTypes: number;
  dayParts: number;
}

/** The sums of one zone pair in one day type and device group, per day part (forEachCell). */
export interface PairSums {
  weight: Float64Array;
  durationMs: Float64Array;
  sample: Float64Array;
}

/** Logged cell additions (24 bytes each, ~96 MB) before they are folded into the table. */
const MAX_LOGGED_ADDITIONS = 1 << 22;

/**
 * An OD analysis' sums kept at the finest split its output needs: per zone pair, group mask, local
 * weekday and time slot, one cell per trip and pair. Day types (weekday sets), day parts (slot spans)
 * and device groups overlap (All Day holds Peak AM, All Vehicles holds Personal), so adding each trip
 * to every slice it counts in cost ~9 scattered cell additions per pair; here it costs one, and the
 * slices are summed from the fine cells when read, in cache.
 *
 * The sums stay exact (expansion weights on a binary grid, whole milliseconds, counts), so any order
 * of addition gives the same bits as adding each trip to its slices did.
 */
export class OdSums {
  /**
   * Keyed pair × fineCount + fine, fine = (mask × WEEKDAYS + weekday) × slots + slot: the absorbed cells
   * (merges), and the scan's additions in `added`, folded in only when the cells are exported.
   */
  private readonly cells = new CellTable();
  private readonly added = new CellLog();
  /**
   * Absorbed cells kept as they came (a merge's shard partials), repeated keys and all: reading visits
   * every cell sorted by pair anyway (sortedCells), so hashing them into `cells` first only cost time.
   */
  private readonly absorbed: CellRecords[] = [];
  private readonly fineCount: number;
  /** Per group mask: zone totals keyed (weekday × slots + slot) × zones + zone; null until met. */
  private readonly originFine: (Float64Array | null)[] = new Array<Float64Array | null>(MASKS).fill(null);
  private readonly destinationFine: (Float64Array | null)[] = new Array<Float64Array | null>(MASKS).fill(
    null,
  );
  /** The totals per slice (dayType × GROUP_SLOTS + group) × dayParts + dayPart, summed when first read. */
  private originSlices: KeyedSums | null = null;
  private destinationSlices: KeyedSums | null = null;
  /** Groups whose cells are whole: a merge of some groups' cells (absorb) leaves the others partial. */
  private wholeGroups = (1 << GROUP_SLOTS) - 1;

  constructor(
    private readonly slicing: SumSlicing,
    private readonly slots: number,
    private readonly originCount: number,
    private readonly destinationCount: number,
    private readonly maxLoggedAdditions = MAX_LOGGED_ADDITIONS,
  ) {
    this.fineCount = MASKS * WEEKDAYS * slots;
    if (originCount * destinationCount * this.fineCount > Number.MAX_SAFE_INTEGER)
      throw new Error(`${originCount} × ${destinationCount} zones are too many for one OD analysis`);
  }

  /** The fine index of a trip's group mask, weekday and slot. */
  fineOf(mask: number, weekday: number, slot: number): number {
    return (mask * WEEKDAYS + weekday) * this.slots + slot;
  }

  addPair(pair: number, fine: number, weight: number, durationMs: number): void {
    this.added.add(pair * this.fineCount + fine, weight, durationMs);
    // The log grows with trips, the table only with distinct cells: fold now and then, so memory stays
    // bounded however many trips a scan reads (sums are exact in any order, so the bits do not change).
    if (this.added.size >= this.maxLoggedAdditions) this.settled();
  }

  /** Cell additions logged and not yet folded into the table. */
  get loggedAdditions(): number {
    return this.added.size;
  }

  addOrigin(mask: number, weekday: number, slot: number, zone: number, weight: number): void {
    const sums = (this.originFine[mask] ??= this.fineTotals(this.originCount));
    sums[(weekday * this.slots + slot) * this.originCount + zone] += weight;
    this.originSlices = null;
  }

  addDestination(mask: number, weekday: number, slot: number, zone: number, weight: number): void {
    const sums = (this.destinationFine[mask] ??= this.fineTotals(this.destinationCount));
    sums[(weekday * this.slots + slot) * this.destinationCount + zone] += weight;
    this.destinationSlices = null;
  }

  private fineTotals(zones: number): Float64Array {
    return new Float64Array(WEEKDAYS * this.slots * zones);
  }

  /** A zone's total as origin in a slice ((dayType × GROUP_SLOTS + group) × dayParts + dayPart). */
  originTotal(slice: number, zone: number): number {
    this.originSlices ??= this.sliceTotals(this.originFine, this.originCount);
    return this.originSlices.get(slice * this.originCount + zone);
  }

  destinationTotal(slice: number, zone: number): number {
    this.destinationSlices ??= this.sliceTotals(this.destinationFine, this.destinationCount);
    return this.destinationSlices.get(slice * this.destinationCount + zone);
  }

  /** The fine zone totals summed into every slice they count in. */
  private sliceTotals(fine: (Float64Array | null)[], zones: number): KeyedSums {
    const { weekdayTypes, slotParts, dayTypes, dayParts } = this.slicing;
    const out = new KeyedSums(dayTypes * GROUP_SLOTS * dayParts * zones);
    for (let mask = 0; mask < MASKS; mask++) {
      const sums = fine[mask];
      if (!sums) continue;
      const groups = groupsOf(mask);
      for (let weekday = 0; weekday < WEEKDAYS; weekday++)
        for (let slot = 0; slot < this.slots; slot++) {
          const base = (weekday * this.slots + slot) * zones;
          for (let zone = 0; zone < zones; zone++) {
            const v = sums[base + zone];
            if (v === 0) continue;
            for (const dt of weekdayTypes[weekday])
              for (const g of groups)
                for (const dp of slotParts[slot])
                  out.add(((dt * GROUP_SLOTS + g) * dayParts + dp) * zones + zone, v);
          }
        }
    }
    return out;
  }

  /**
   * Visits each zone pair with a sampled trip in a day type and group, ordered day type → group →
   * pair, with its sums per day part (reused arrays: a day part without trips has sample 0). Only
   * groups below `groupCount`.
   */
  forEachCell(
    groupCount: number,
    visit: (dayType: number, group: number, pair: number, sums: PairSums) => void,
  ): void {
    const { weekdayTypes, slotParts, dayTypes, dayParts } = this.slicing;
    const cells = this.sortedCells();
    const n = cells.pair.length;
    const sums: PairSums = {
      weight: new Float64Array(dayParts),
      durationMs: new Float64Array(dayParts),
      sample: new Float64Array(dayParts),
    };
    // Per day type: which weekdays count in it.
    const inType = Array.from({ length: dayTypes }, () => new Uint8Array(WEEKDAYS));
    weekdayTypes.forEach((types, weekday) => types.forEach((dt) => (inType[dt][weekday] = 1)));
    for (let dt = 0; dt < dayTypes; dt++)
      for (let g = 0; g < Math.min(groupCount, GROUP_SLOTS); g++) {
        const bit = 1 << g;
        if ((this.wholeGroups & bit) === 0) continue;
        for (let start = 0; start < n;) {
          const pair = cells.pair[start];
          let end = start;
          let any = false;
          for (; end < n && cells.pair[end] === pair; end++) {
            if ((cells.mask[end] & bit) === 0 || inType[dt][cells.weekday[end]] === 0) continue;
            if (!any) {
              sums.weight.fill(0);
              sums.durationMs.fill(0);
              sums.sample.fill(0);
              any = true;
            }
            for (const dp of slotParts[cells.slot[end]]) {
              sums.weight[dp] += cells.weight[end];
              sums.durationMs[dp] += cells.durationMs[end];
              sums.sample[dp] += cells.sample[end];
            }
          }
          if (any) visit(dt, g, pair, sums);
          start = end;
        }
      }
  }

  /** The fine cells grouped by pair in ascending pair order, decoded into columns. */
  private sortedCells() {
    const records = this.allRecords();
    const n = records.keys.length;
    const pairOf = this.pairsOf(records.keys);
    const order = byPair(pairOf, this.originCount * this.destinationCount);
    const out = {
      pair: new Float64Array(n),
      mask: new Uint16Array(n),
      weekday: new Uint8Array(n),
      slot: new Uint16Array(n),
      weight: new Float64Array(n),
      durationMs: new Float64Array(n),
      sample: new Float64Array(n),
    };
    for (let i = 0; i < n; i++) {
      const r = order[i];
      const fine = records.keys[r] - pairOf[r] * this.fineCount;
      const slot = fine % this.slots;
      const maskWeekday = (fine - slot) / this.slots;
      out.pair[i] = pairOf[r];
      out.mask[i] = Math.floor(maskWeekday / WEEKDAYS);
      out.weekday[i] = maskWeekday % WEEKDAYS;
      out.slot[i] = slot;
      out.weight[i] = records.weights[r];
      out.durationMs[i] = records.durations[r];
      out.sample[i] = records.samples[r];
    }
    return out;
  }

  /**
   * The fine cells and zone totals as plain data (a shard's partial sums); without `withCells`, the
   * cells are left out (exported apart by exportCellPieces).
   */
  exportState(withCells = true): OdSumsState {
    return {
      cells: withCells ? this.settled().exportRecords() : emptyCellRecords(0),
      originTotals: exportFine(this.originFine),
      destinationTotals: exportFine(this.destinationFine),
    };
  }

  /**
   * The fine cells cut into `pieces` runs of zone pairs (piece = ⌊pair × pieces / pairs⌋): every cell of
   * a pair lands in the same piece, so a merge of one piece per shard has whole pairs, in pair order
   * after the pieces before it.
   */
  exportCellPieces(pieces: number): CellRecords[] {
    const pairs = this.originCount * this.destinationCount;
    const cells = sumRepeatedKeys(this.byKey());
    const out: CellRecords[] = [];
    let from = 0;
    for (let piece = 0; piece < pieces; piece++) {
      // Pairs below ⌈(piece + 1) × pairs / pieces⌉ are those with ⌊pair × pieces / pairs⌋ ≤ piece.
      const endPair = Math.ceil(((piece + 1) * pairs) / pieces);
      let to = from;
      while (to < cells.keys.length && Math.floor(cells.keys[to] / this.fineCount) < endPair) to++;
      out.push(sliceCellRecords(cells, from, to));
      from = to;
    }
    return out;
  }

  /**
   * Every cell (table, log and absorbed records) sorted by key (pair, then fine cell), repeated keys
   * side by side: a counting sort by pair, then each pair's few records by key. Cheaper than hashing a
   * scan's ~360,000 logged additions into the table (~3× the time at 250,000 trips), and the pieces
   * come out in the pair order their merge reads them in.
   */
  private byKey(): CellRecords {
    const records = this.allRecords();
    const { keys } = records;
    const order = byPair(this.pairsOf(keys), this.originCount * this.destinationCount);
    for (let start = 0; start < order.length;) {
      const pair = Math.floor(keys[order[start]] / this.fineCount);
      let end = start + 1;
      while (end < order.length && Math.floor(keys[order[end]] / this.fineCount) === pair) end++;
      if (end - start > 1) sortRunByKey(order, start, end, keys);
      start = end;
    }
    return permuteCellRecords(records, order);
  }

  /** The table's, the log's and the absorbed records, as one. */
  private allRecords(): CellRecords {
    return concatCellRecords(
      [this.cells.exportRecords(), this.added.toRecords(), ...this.absorbed].filter((r) => r.keys.length > 0),
    );
  }

  private pairsOf(keys: Float64Array): Float64Array {
    const pairOf = new Float64Array(keys.length);
    for (let i = 0; i < keys.length; i++) pairOf[i] = Math.floor(keys[i] / this.fineCount);
    return pairOf;
  }

  /** The cells with the scan's additions and absorbed records folded in: one record per key. */
  private settled(): CellTable {
    if (this.added.size > 0) {
      this.cells.absorbRecords(this.added.toRecords());
      this.added.clear();
    }
    for (const records of this.absorbed.splice(0)) this.cells.absorbRecords(records);
    return this.cells;
  }

  /**
   * Adds exported sums of the same zones and slicing. With `cellGroups`, only the cells that count in
   * one of those groups are added (none for an empty list), and the cells of the other groups are no
   * longer visited; the zone totals are always added.
   */
  absorb(state: OdSumsState, cellGroups?: readonly number[]): void {
    if (!cellGroups) {
      if (state.cells.keys.length > 0) this.absorbed.push(state.cells);
    } else {
      const wanted = cellGroups.reduce((m, g) => m | (1 << g), 0);
      this.wholeGroups &= wanted;
      const perMask = WEEKDAYS * this.slots;
      if (wanted !== 0)
        this.cells.absorbRecords(
          state.cells,
          (key) => (Math.floor((key % this.fineCount) / perMask) & wanted) !== 0,
        );
    }
    this.absorbFine(this.originFine, state.originTotals, this.originCount);
    this.absorbFine(this.destinationFine, state.destinationTotals, this.destinationCount);
    this.originSlices = null;
    this.destinationSlices = null;
  }

  private absorbFine(
    fine: (Float64Array | null)[],
    from: { keys: Float64Array; values: Float64Array },
    zones: number,
  ): void {
    const perMask = WEEKDAYS * this.slots * zones;
    for (let i = 0; i < from.keys.length; i++) {
      const mask = Math.floor(from.keys[i] / perMask);
      const sums = (fine[mask] ??= this.fineTotals(zones));
      sums[from.keys[i] - mask * perMask] += from.values[i];
    }
  }
}

/** OdSums as plain data: fine cells, and zone totals keyed mask × (WEEKDAYS × slots × zones) + index. */
export interface OdSumsState {
  cells: CellRecords;
  originTotals: { keys: Float64Array; values: Float64Array };
  destinationTotals: { keys: Float64Array; values: Float64Array };
}

/** The non-zero fine totals (counted first, then written into typed arrays: no growing JS arrays). */
function exportFine(fine: (Float64Array | null)[]): { keys: Float64Array; values: Float64Array } {
  let n = 0;
  for (const sums of fine) if (sums) for (let i = 0; i < sums.length; i++) if (sums[i] !== 0) n++;
  const keys = new Float64Array(n);
  const values = new Float64Array(n);
  n = 0;
  fine.forEach((sums, mask) => {
    if (!sums) return;
    for (let i = 0; i < sums.length; i++)
      if (sums[i] !== 0) {
        keys[n] = mask * sums.length + i;
        values[n++] = sums[i];
      }
  });
  return { keys, values };
}

/** Sorts order[start..end) by key (ties in place): insertion sort, as a pair has few records. */
function sortRunByKey(order: Int32Array, start: number, end: number, keys: Float64Array): void {
  if (end - start > 64) {
    const run = Array.from(order.subarray(start, end)).sort((a, b) => keys[a] - keys[b] || a - b);
    order.set(run, start);
    return;
  }
  for (let i = start + 1; i < end; i++) {
    const r = order[i];
    const k = keys[r];
    let j = i - 1;
    for (; j >= start && keys[order[j]] > k; j--) order[j + 1] = order[j];
    order[j + 1] = r;
  }
}

/** The records in `order`. */
function permuteCellRecords(records: CellRecords, order: Int32Array): CellRecords {
  const out = emptyCellRecords(order.length);
  for (let i = 0; i < order.length; i++) {
    const r = order[i];
    out.keys[i] = records.keys[r];
    out.weights[i] = records.weights[r];
    out.durations[i] = records.durations[r];
    out.samples[i] = records.samples[r];
  }
  return out;
}

/** Records sorted by key with each key's repeats summed into one (sums exact: any order, same bits). */
function sumRepeatedKeys(sorted: CellRecords): CellRecords {
  const { keys, weights, durations, samples } = sorted;
  let n = 0;
  for (let i = 0; i < keys.length; i++) {
    if (n > 0 && keys[n - 1] === keys[i]) {
      weights[n - 1] += weights[i];
      durations[n - 1] += durations[i];
      samples[n - 1] += samples[i];
      continue;
    }
    keys[n] = keys[i];
    weights[n] = weights[i];
    durations[n] = durations[i];
    samples[n++] = samples[i];
  }
  return sliceCellRecords(sorted, 0, n);
}

/** Records from..to as records of their own (copies: each is serialised apart, without the rest). */
function sliceCellRecords(records: CellRecords, from: number, to: number): CellRecords {
  return {
    keys: records.keys.slice(from, to),
    weights: records.weights.slice(from, to),
    durations: records.durations.slice(from, to),
    samples: records.samples.slice(from, to),
  };
}

/** Most pairs for which byPair counts (a 64 MB table); more are sorted. */
const COUNTED_PAIRS = 1 << 24;

/**
 * Record indexes ordered by pair (ties in record order): a counting sort over the pair numbers
 * (sequential passes) where the pairs fit in a table, else a comparison sort.
 */
function byPair(pairOf: Float64Array, pairs: number): Int32Array {
  const n = pairOf.length;
  const order = new Int32Array(n);
  if (pairs > COUNTED_PAIRS) {
    const sorted = Array.from({ length: n }, (_, i) => i).sort((a, b) => pairOf[a] - pairOf[b] || a - b);
    order.set(sorted);
    return order;
  }
  const next = new Int32Array(pairs + 1);
  for (let i = 0; i < n; i++) next[pairOf[i] + 1]++;
  for (let p = 1; p <= pairs; p++) next[p] += next[p - 1];
  for (let i = 0; i < n; i++) order[next[pairOf[i]]++] = i;
  return order;
}

/** The groups of a mask, ascending. */
function groupsOf(mask: number): number[] {
  const groups: number[] = [];
  for (let g = 0; g < GROUP_SLOTS; g++) if ((mask & (1 << g)) !== 0) groups.push(g);
  return groups;
}
