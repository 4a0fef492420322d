import {
  checkedCodeTable,
  CODE_TABLE_VERSION,
  StoredFormatError,
  TRIP_PURPOSE_CODES,
  TRIP_PURPOSE_OF_CODE,
} from "../../engine/trips/codes.js";
import type { TraceSource, VehicleClass } from "../../engine/trips/types.js";
import {
  INCOME_COUNTER,
  MAX_INCOME_BAND,
  PURPOSE_COUNTER,
  SPEED_BINS,
  type SegmentMonthStats,
  type SegmentStatCell,
} from "../../engine/counts/segment-stats.js";
import { type SegmentStatsQuery } from "../../app/ports/store.js";
import { TALLY_CELLS, tallyCellFields, type SegmentCellBatch } from "../../engine/counts/segment-cells.js";
import type { BlobArena } from "./blob-arena.js";

/**
 * The packed layout of segment counts: one row per segment × month holding every cell the trip
 * pipeline tallies (day of week × hour × direction × vehicle class × source), so nothing is lost
 * and any day type or day part is still a union of cells. A metrics query reads one row per
 * segment-month and sums the cells its filters select through a mask, in memory, instead of
 * SQLite visiting one index entry per cell (~170 per segment-month).
 *
 * Two BLOBs per segment-month, only cells that were ever added, sorted by cell index:
 * - totals, read by every query: header, then speed sums (float64), trips and speed counts (uint32)
 *   and cell indexes (uint16), each as one column;
 * - details, read only for the histogram, purpose and income fields: header, then (cell << 8 | counter)
 *   keys and counts (uint32), where counter is a speed bin, a purpose or an income band.
 * Numbers are in the machine's byte order, as in the trip chunks (little-endian on x86-64 and ARM64).
 *
 * Header (8 bytes): uint32 number of entries, uint16 format, uint16 code table (trip purposes are
 * counters by their code in codes.ts). Format 1 (the first release) wrote the format as a uint32,
 * which reads as code table 0: version 1's codes. Format 2 names its table; the cell layout is the same.
 * An unknown format or a newer code table is a StoredFormatError, never a misread.
 */

/** Written into every new BLOB's header; a cell layout change bumps it and keeps reading the older ones. */
export const PACK_FORMAT = 2;
const HEADER_BYTES = 8;

/**
 * The cell layout of formats 1 and 2, written out: a value's slot in its dimension. Slots follow the
 * text order of the former per-cell table's primary key, so sums visit cells in the same order as
 * SQLite's SUM did there (see addTotals). Fixed for these formats: tallying another class or source
 * needs a new format (with more slots per cell), never a renumbering of these.
 */
const DIRECTION_SLOTS: Readonly<Record<"against" | "with", number>> = { against: 0, with: 1 };
const CLASS_SLOTS: Readonly<Partial<Record<VehicleClass, number>>> = {
  bicycle: 0,
  heavy_commercial: 1,
  medium_commercial: 2,
  pedestrian: 3,
  personal: 4,
};
const SOURCE_SLOTS: Readonly<Record<TraceSource, number>> = { lbs: 0, telematics: 1 };
const [DIRECTIONS, CLASSES, SOURCES] = [DIRECTION_SLOTS, CLASS_SLOTS, SOURCE_SLOTS].map(
  (slots) => Object.keys(slots).length,
);
/** Direction × class × source slots: a cell's index modulo SLOTS (its day and hour are the quotient). */
export const SLOTS = DIRECTIONS * CLASSES * SOURCES;
/** Cells of one segment-month. */
export const CELLS = 7 * 24 * SLOTS;

/** Detail counters of a cell (segment-stats.ts): speed bins, then purposes by code, then income bands. */
const MAX_COUNT = 0xffff_ffff;

const slotOf = (slots: Readonly<Record<string, number | undefined>>, value: string) =>
  Object.hasOwn(slots, value) ? (slots[value] ?? -1) : -1;

/** A cell's index, or -1 when a value is outside the layout. */
function indexOf(dayOfWeek: number, hour: number, direction: string, vehicleClass: string, source: string) {
  const d = slotOf(DIRECTION_SLOTS, direction);
  const c = slotOf(CLASS_SLOTS, vehicleClass);
  const s = slotOf(SOURCE_SLOTS, source);
  const inRange = Number.isInteger(dayOfWeek) && dayOfWeek >= 1 && dayOfWeek <= 7 && Number.isInteger(hour);
  if (!inRange || hour < 0 || hour > 23 || d < 0 || c < 0 || s < 0) return -1;
  return ((((dayOfWeek - 1) * 24 + hour) * DIRECTIONS + d) * CLASSES + c) * SOURCES + s;
}

/** Which cells a query's filters select (1) — values outside the layout select nothing. */
export function cellMask(
  q: Pick<SegmentStatsQuery, "daysOfWeek" | "hours" | "directions" | "vehicleClasses" | "sources">,
): Uint8Array {
  const mask = new Uint8Array(CELLS);
  for (const dayOfWeek of q.daysOfWeek)
    for (const hour of q.hours)
      for (const direction of q.directions)
        for (const vehicleClass of q.vehicleClasses)
          for (const source of q.sources) {
            const i = indexOf(dayOfWeek, hour, direction, vehicleClass, source);
            if (i >= 0) mask[i] = 1;
          }
  return mask;
}

interface Totals {
  trips: number;
  speedCount: number;
  speedSumKph: number;
}

/** One segment-month decoded for updating (ingest, migration): add cells, encode again. */
export class SegmentMonthCounters {
  private readonly totals = new Map<number, Totals>();
  /** (cell << 8 | counter) → count. */
  private readonly details = new Map<number, number>();

  static decode(totals?: Uint8Array, details?: Uint8Array): SegmentMonthCounters {
    const counters = new SegmentMonthCounters();
    if (totals) {
      const t = totalsView(totals);
      for (let i = 0; i < t.cell.length; i++)
        counters.totals.set(t.cell[i], {
          trips: t.trips[i],
          speedCount: t.speedCount[i],
          speedSumKph: t.speedSum[i],
        });
    }
    if (details) {
      const d = detailsView(details);
      for (let i = 0; i < d.key.length; i++) counters.details.set(d.key[i], d.count[i]);
    }
    return counters;
  }

  /**
   * Adds one cell of this segment-month, with its speed sum or the one given; throws on values the layout
   * has no place for.
   */
  add(c: SegmentStatCell, speedSumKph = c.speedSumKph): void {
    const cell = indexOf(c.dayOfWeek, c.hour, c.direction, c.vehicleClass, c.source);
    if (cell < 0)
      throw new RangeError(
        `segment cell out of range: day ${c.dayOfWeek}, hour ${c.hour}, ${c.direction}, ${c.vehicleClass}, ${c.source}`,
      );
    const t = this.totals.get(cell);
    if (t) {
      t.trips += c.trips;
      t.speedCount += c.speedCount;
      t.speedSumKph += speedSumKph;
    } else {
      this.totals.set(cell, { trips: c.trips, speedCount: c.speedCount, speedSumKph });
    }
    // Loops without copies or entry arrays: ingest adds ~30 cells per trip. Counts are integers, so the
    // order they are added in does not matter.
    const histogram = c.speedHistogram;
    const bins = Math.min(histogram.length, SPEED_BINS);
    for (let bin = 0; bin < bins; bin++) this.addDetail(cell, bin, histogram[bin] ?? 0);
    for (const purpose in c.purposes) this.addDetail(cell, purposeCounter(purpose), c.purposes[purpose]);
    for (const band in c.incomes) this.addDetail(cell, incomeCounter(band), c.incomes[band]);
  }

  private addDetail(cell: number, counter: number, n: number): void {
    // Histogram zeros carry nothing; purpose and income keys are kept even at 0, as the JSON kept them.
    if (n === 0 && counter < PURPOSE_COUNTER) return;
    const key = cell * 256 + counter;
    this.details.set(key, (this.details.get(key) ?? 0) + n);
  }

  encode(): { totals: Buffer; details: Buffer } {
    // Typed arrays sort numerically in native code (cells < 3,360, detail keys < 2^20).
    const cells = Uint16Array.from(this.totals.keys()).sort();
    const n = cells.length;
    const totals = new ArrayBuffer(HEADER_BYTES + 18 * n);
    header(totals, 0, n);
    const t = totalsColumns(totals, HEADER_BYTES, n);
    for (let i = 0; i < n; i++) {
      const v = this.totals.get(cells[i])!;
      t.cell[i] = cells[i];
      t.trips[i] = checkedCount(v.trips);
      t.speedCount[i] = checkedCount(v.speedCount);
      t.speedSum[i] = v.speedSumKph;
    }
    const keys = Uint32Array.from(this.details.keys()).sort();
    const details = new ArrayBuffer(HEADER_BYTES + 8 * keys.length);
    header(details, 0, keys.length);
    const d = detailsColumns(details, HEADER_BYTES, keys.length);
    for (let i = 0; i < keys.length; i++) {
      d.key[i] = keys[i];
      d.count[i] = checkedCount(this.details.get(keys[i])!);
    }
    return { totals: Buffer.from(totals), details: Buffer.from(details) };
  }
}

/**
 * An ingest batch's segment-months, each encoded: the bytes SegmentMonthCounters gives for the same
 * cells, without an object or map entry per cell. The BLOBs are cut from `arena`, and the scratch arrays
 * kept from one segment-month to the next: fresh ones per segment-month were ~0.8 µs each, ~3,000
 * segment-months a batch.
 */
export class BatchGroupPacker {
  private orderScratch = new Uint32Array(256);
  private keyScratch = new Uint32Array(1024);
  private countScratch = new Uint32Array(1024);

  constructor(
    private readonly batch: SegmentCellBatch,
    private readonly arena: BlobArena,
  ) {}

  /** Segment-month g's BLOBs. */
  pack(g: number): { totals: Buffer; details: Buffer } {
    const first = this.batch.cellStart[g];
    const order = this.batchOrder(g);
    return {
      totals: packTotals(this.batch, first, order, this.arena),
      details: mergeDetails(this.batchDetails(first, order), this.arena),
    };
  }

  /** The batch cells of segment-month g sorted by their cell in this layout, as (cell << 16 | k - first). */
  private batchOrder(g: number): Uint32Array {
    const { batch } = this;
    const first = batch.cellStart[g];
    const n = batch.cellStart[g + 1] - first;
    if (this.orderScratch.length < n) this.orderScratch = new Uint32Array(2 * n);
    const order = this.orderScratch.subarray(0, n);
    const packCell = packCellOfTally();
    for (let i = 0; i < n; i++) {
      const cell = packCell[batch.cell[first + i]];
      if (cell < 0)
        throw new RangeError(
          `segment cell out of range: ${JSON.stringify(tallyCellFields(batch.cell[first + i]))}`,
        );
      order[i] = cell * 65_536 + i;
    }
    return order.sort();
  }

  /**
   * The group's detail counters as keys (cell << 8 | counter) and counts, in key order: cells are taken in
   * `order` and a batch lists each cell's counters ascending (SegmentCellBatch), so no sort is needed —
   * unless a batch breaks that, when the pairs are sorted.
   */
  private batchDetails(first: number, order: Uint32Array): DetailPairs {
    const { batch } = this;
    let n = 0;
    for (const o of order) {
      const k = first + (o & 0xffff);
      n += batch.detailStart[k + 1] - batch.detailStart[k];
    }
    if (this.keyScratch.length < n)
      [this.keyScratch, this.countScratch] = [new Uint32Array(2 * n), new Uint32Array(2 * n)];
    const key = this.keyScratch.subarray(0, n);
    const count = this.countScratch.subarray(0, n);
    let at = 0;
    let sorted = true;
    for (const o of order) {
      const k = first + (o & 0xffff);
      for (let d = batch.detailStart[k]; d < batch.detailStart[k + 1]; d++) {
        key[at] = (o >>> 16) * 256 + batch.counter[d];
        count[at] = batch.count[d];
        if (at > 0 && key[at] <= key[at - 1]) sorted = false;
        at++;
      }
    }
    return sorted ? { key, count } : sortedPairs(key, count);
  }
}

interface DetailPairs {
  key: Uint32Array;
  count: Uint32Array;
}

/** The batch's cells of one segment-month, taken in `order` (sorted by cell), as a totals BLOB. */
function packTotals(batch: SegmentCellBatch, first: number, order: Uint32Array, arena: BlobArena): Buffer {
  const n = order.length;
  const { buffer, offset, blob } = arena.take(HEADER_BYTES + 18 * n);
  header(buffer, offset, n);
  const t = totalsColumns(buffer, offset + HEADER_BYTES, n);
  for (let at = 0; at < n; at++) {
    const k = first + (order[at] & 0xffff);
    t.cell[at] = order[at] >>> 16;
    t.trips[at] = checkedCount(batch.trips[k]);
    t.speedCount[at] = checkedCount(batch.speedCount[k]);
    t.speedSum[at] = batch.speedSumKph[k];
  }
  return blob;
}

/**
 * Two totals BLOBs of one segment-month (two parts, or a part and what a batch adds) as one: cells in
 * either, those in both summed (`older`'s value first, as SegmentMonthCounters.add adds to what it holds).
 */
export function mergePackedTotals(older: Uint8Array, newer: Uint8Array, arena: BlobArena): Buffer {
  const [a, b] = [totalsView(older), totalsView(newer)];
  const n = unionSize(a.cell, b.cell);
  const { buffer, offset, blob } = arena.take(HEADER_BYTES + 18 * n);
  header(buffer, offset, n);
  const t = totalsColumns(buffer, offset + HEADER_BYTES, n);
  let i = 0;
  let j = 0;
  for (let at = 0; at < n; at++) {
    const cellA = i < a.cell.length ? a.cell[i] : Infinity;
    const cellB = j < b.cell.length ? b.cell[j] : Infinity;
    let trips = 0;
    let speedCount = 0;
    let speedSum = 0;
    if (cellA <= cellB) {
      trips = a.trips[i];
      speedCount = a.speedCount[i];
      speedSum = a.speedSum[i];
      i++;
    }
    if (cellB <= cellA) {
      trips += b.trips[j];
      speedCount += b.speedCount[j];
      speedSum += b.speedSum[j];
      j++;
    }
    t.cell[at] = Math.min(cellA, cellB);
    t.trips[at] = checkedCount(trips);
    t.speedCount[at] = checkedCount(speedCount);
    t.speedSum[at] = speedSum;
  }
  return blob;
}

/** Two details BLOBs of one segment-month as one: counters in either, those in both summed. */
export function mergePackedDetails(older: Uint8Array, newer: Uint8Array, arena: BlobArena): Buffer {
  return mergeDetails(detailsView(newer), arena, older);
}

/** Keys in either of two sorted lists of distinct keys, those in both counted once. */
function unionSize(a: Uint32Array | Uint16Array, b: ArrayLike<number> | undefined): number {
  const m = b ? b.length : 0;
  let both = 0;
  for (let i = 0, j = 0; i < a.length && j < m;) {
    const x = a[i];
    const y = b![j];
    if (x <= y) i++;
    if (y <= x) j++;
    if (x === y) both++;
  }
  return a.length + m - both;
}

/** Pairs sorted by key (keys < 2^20, counts < 2^32: both fit one float64 exactly). */
function sortedPairs(key: Uint32Array, count: Uint32Array): DetailPairs {
  const pairs = Float64Array.from(key, (k, i) => k * 2 ** 32 + count[i]).sort();
  pairs.forEach((p, i) => {
    key[i] = Math.floor(p / 2 ** 32);
    count[i] = p % 2 ** 32;
  });
  return { key, count };
}

function mergeDetails(added: DetailPairs, arena: BlobArena, stored?: Uint8Array): Buffer {
  const s = stored ? detailsView(stored) : null;
  const m = s ? s.key.length : 0;
  const n = unionSize(added.key, s?.key);
  const { buffer, offset, blob } = arena.take(HEADER_BYTES + 8 * n);
  header(buffer, offset, n);
  const d = detailsColumns(buffer, offset + HEADER_BYTES, n);
  let i = 0;
  let j = 0;
  for (let at = 0; at < n; at++) {
    const key = i < added.key.length ? added.key[i] : Infinity;
    const storedKey = j < m ? s!.key[j] : Infinity;
    let count = 0;
    if (storedKey <= key) count += s!.count[j++];
    if (key <= storedKey) count += added.count[i++];
    d.key[at] = Math.min(key, storedKey);
    d.count[at] = checkedCount(count);
  }
  return blob;
}

/** The cell of this layout for each tally cell of the engine (segment-cells.ts); -1 outside the layout. */
let packCells: Int16Array | undefined;
function packCellOfTally(): Int16Array {
  packCells ??= Int16Array.from({ length: TALLY_CELLS }, (_, cell) => {
    const f = tallyCellFields(cell);
    return indexOf(f.dayOfWeek, f.hour, f.direction, f.vehicleClass, f.source);
  });
  return packCells;
}

/**
 * Adds the selected cells' trips and speeds to `into`. The speed sum is compensated
 * (Kahan–Babuška–Neumaier) in cell order, exactly as SQLite's SUM added the same cells up in the
 * former per-cell table, so speeds come out bit for bit as before.
 */
export function addTotals(blob: Uint8Array, mask: Uint8Array, into: SegmentMonthStats): void {
  // The hot loop of every metrics call: plain locals and typed arrays only.
  const { cell, trips, speedCount, speedSum } = totalsView(blob);
  let tripSum = 0;
  let countSum = 0;
  let sum = 0;
  let error = 0;
  for (let i = 0; i < cell.length; i++) {
    if (mask[cell[i]] === 0) continue;
    tripSum += trips[i];
    countSum += speedCount[i];
    const r = speedSum[i];
    const t = sum + r;
    if (Math.abs(sum) > Math.abs(r)) error += sum - t + r;
    else error += r - t + sum;
    sum = t;
  }
  into.trips += tripSum;
  into.speedCount += countSum;
  into.speedSumKph += sum + error;
}

/**
 * addTotals for many masks in one pass over the BLOB, for masks that treat every day and hour alike, so
 * that whether a cell counts depends on its slot only: `sumsOfSlot[cell % SLOTS]` lists the indexes
 * (0 … n-1) of the sums the cell belongs to. Each sum sees its cells in cell order through the same
 * compensated addition, so every result is bit for bit what addTotals gives with that sum's mask. The
 * sums are scratch arrays the next call overwrites: read them first.
 *
 * Speed sums tallied in whole steps of 1/1024 km/h (segment-cells.ts) add up exactly in any order, with
 * nothing to compensate: such a month is summed per slot first, then each slot into its sums, with the
 * same results. Cell by cell, ~12 compensated additions each, the rollups took a fifth of an ingest
 * batch's `addBatch`.
 */
export function addTotalsBySlot(
  blob: Uint8Array,
  sumsOfSlot: readonly (readonly number[])[],
  n: number,
): SlotSums {
  const totals = totalsView(blob);
  const sums = slotSumsFor(n);
  if (!addExactBySlot(totals, sumsOfSlot, sums)) addCompensatedBySlot(totals, sumsOfSlot, sums);
  return sums;
}

/** Sums below this stay exact in steps of 1/1024 (2^43 × 2^10 = 2^53). */
const EXACT_SUM_LIMIT = 2 ** 43;
const bySlot = {
  trips: new Float64Array(SLOTS),
  count: new Float64Array(SLOTS),
  sum: new Float64Array(SLOTS),
};

/** Adds per slot, then per sum; false (nothing added) when a speed sum is not in whole steps of 1/1024. */
function addExactBySlot(
  { cell, trips, speedCount, speedSum }: ReturnType<typeof totalsView>,
  sumsOfSlot: readonly (readonly number[])[],
  { tripSum, countSum, sum }: SlotSums,
): boolean {
  // The slots' sums are scratch: a month found inexact part-way leaves the sums untouched.
  for (const column of Object.values(bySlot)) column.fill(0);
  let total = 0;
  for (let i = 0; i < cell.length; i++) {
    const r = speedSum[i];
    if (!Number.isInteger(r * 1024) || r < 0) return false;
    total += r;
    const slot = cell[i] % SLOTS;
    bySlot.trips[slot] += trips[i];
    bySlot.count[slot] += speedCount[i];
    bySlot.sum[slot] += r;
  }
  if (total >= EXACT_SUM_LIMIT) return false;
  for (let slot = 0; slot < SLOTS; slot++) {
    if (bySlot.trips[slot] === 0 && bySlot.count[slot] === 0) continue;
    for (const k of sumsOfSlot[slot]) {
      tripSum[k] += bySlot.trips[slot];
      countSum[k] += bySlot.count[slot];
      sum[k] += bySlot.sum[slot];
    }
  }
  return true;
}

function addCompensatedBySlot(
  { cell, trips, speedCount, speedSum }: ReturnType<typeof totalsView>,
  sumsOfSlot: readonly (readonly number[])[],
  { tripSum, countSum, sum, error }: SlotSums,
): void {
  for (let i = 0; i < cell.length; i++) {
    const r = speedSum[i];
    for (const k of sumsOfSlot[cell[i] % SLOTS]) {
      tripSum[k] += trips[i];
      countSum[k] += speedCount[i];
      const t = sum[k] + r;
      if (Math.abs(sum[k]) > Math.abs(r)) error[k] += sum[k] - t + r;
      else error[k] += r - t + sum[k];
      sum[k] = t;
    }
  }
}

/** The n sums of addTotalsBySlot: trips, speed counts and the compensated speed sum (sum[k] + error[k]). */
export interface SlotSums {
  tripSum: Float64Array;
  countSum: Float64Array;
  sum: Float64Array;
  error: Float64Array;
}

/** Reused across calls (once per segment-month of every ingest batch): fresh arrays each time were garbage. */
let slotSums: SlotSums = {
  tripSum: new Float64Array(0),
  countSum: new Float64Array(0),
  sum: new Float64Array(0),
  error: new Float64Array(0),
};

function slotSumsFor(n: number): SlotSums {
  if (slotSums.sum.length < n) {
    const fresh = () => new Float64Array(n);
    slotSums = { tripSum: fresh(), countSum: fresh(), sum: fresh(), error: fresh() };
  }
  for (const sums of Object.values(slotSums)) sums.fill(0, 0, n);
  return slotSums;
}

/** Per-counter sums of one details BLOB, reused across calls (and whether a counter was present at all). */
const counterSums = new Float64Array(256);
const counterSeen = new Uint8Array(256);

/** Adds the selected cells' speed bins, purposes and income bands to `into` (histogram SPEED_BINS long). */
export function addDetails(blob: Uint8Array, mask: Uint8Array, into: SegmentMonthStats): void {
  const { key, count } = detailsView(blob);
  counterSums.fill(0);
  counterSeen.fill(0);
  // Summed per counter code first: string-keyed updates per entry cost several times more.
  for (let i = 0; i < key.length; i++) {
    if (mask[key[i] >>> 8] === 0) continue;
    const counter = key[i] & 255;
    counterSums[counter] += count[i];
    counterSeen[counter] = 1;
  }
  const histogram = into.speedHistogram;
  for (let bin = 0; bin < SPEED_BINS; bin++) histogram[bin] = (histogram[bin] ?? 0) + counterSums[bin];
  const purposesBefore = Object.keys(into.purposes).length;
  TRIP_PURPOSE_OF_CODE.forEach((purpose, code) => addCounter(into.purposes, purpose, PURPOSE_COUNTER + code));
  // Added to purposes already there (another part of the segment-month), a new one would come last: the
  // answer keeps them in code order, as from one BLOB, whichever parts hold which.
  if (purposesBefore > 0 && Object.keys(into.purposes).length > purposesBefore)
    into.purposes = purposesInCodeOrder(into.purposes);
  for (let band = 0; band < 256 - INCOME_COUNTER; band++)
    addCounter(into.incomes, String(band), INCOME_COUNTER + band);
}

/** Purposes in code order. (Income bands are integer keys, which objects keep in ascending order.) */
function purposesInCodeOrder(purposes: Record<string, number>): Record<string, number> {
  const ordered: Record<string, number> = {};
  for (const purpose of TRIP_PURPOSE_OF_CODE)
    if (Object.hasOwn(purposes, purpose)) ordered[purpose] = purposes[purpose];
  return ordered;
}

/** Purposes and bands present stay in the answer even at 0, as they did with the former JSON counts. */
function addCounter(into: Record<string, number>, name: string, counter: number): void {
  if (counterSeen[counter] === 1) into[name] = (into[name] ?? 0) + counterSums[counter];
}

/** Counters of the names seen so far, checked once each (a pattern test per cell cost more than the add). */
const purposeCounters = new Map<string, number>();
const incomeCounters = new Map<string, number>();

function purposeCounter(purpose: string): number {
  let counter = purposeCounters.get(purpose);
  if (counter === undefined) {
    const code = slotOf(TRIP_PURPOSE_CODES, purpose);
    if (code < 0) throw new RangeError(`unknown trip purpose "${purpose}"`);
    purposeCounters.set(purpose, (counter = PURPOSE_COUNTER + code));
  }
  return counter;
}

function incomeCounter(band: string): number {
  let counter = incomeCounters.get(band);
  if (counter === undefined) {
    const n = Number(band);
    if (!/^(0|[1-9]\d*)$/.test(band) || n > MAX_INCOME_BAND)
      throw new RangeError(`income band "${band}" out of range`);
    incomeCounters.set(band, (counter = INCOME_COUNTER + n));
  }
  return counter;
}

function checkedCount(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > MAX_COUNT)
    throw new RangeError(`count ${n} does not fit the layout`);
  return n;
}

function header(buffer: ArrayBuffer, offset: number, n: number): void {
  new Uint32Array(buffer, offset, 1)[0] = n;
  const formats = new Uint16Array(buffer, offset + 4, 2);
  formats[0] = PACK_FORMAT;
  formats[1] = CODE_TABLE_VERSION;
}

/** Entries of a BLOB, once its format and code table are known to this version. */
function countOf(blob: Uint8Array): number {
  if (blob.byteLength < HEADER_BYTES) throw new StoredFormatError("segment counts BLOB without its header");
  const n = new Uint32Array(blob.buffer, blob.byteOffset, 1)[0];
  const [format, codeTable] = new Uint16Array(blob.buffer, blob.byteOffset + 4, 2);
  if (format === 1 && codeTable === 0) return n;
  if (format !== PACK_FORMAT)
    throw new StoredFormatError(
      `segment counts BLOB of format ${format} (this version reads 1 to ${PACK_FORMAT}): upgrade to read it`,
    );
  checkedCodeTable(codeTable, "segment counts BLOB");
  return n;
}

function totalsView(raw: Uint8Array) {
  const blob = aligned(raw);
  return totalsColumns(blob.buffer, blob.byteOffset + HEADER_BYTES, countOf(blob));
}

/** The n entries of a totals BLOB whose header ends at `at`. */
function totalsColumns(buffer: ArrayBufferLike, at: number, n: number) {
  return {
    speedSum: new Float64Array(buffer, at, n),
    trips: new Uint32Array(buffer, at + 8 * n, n),
    speedCount: new Uint32Array(buffer, at + 12 * n, n),
    cell: new Uint16Array(buffer, at + 16 * n, n),
  };
}

function detailsView(raw: Uint8Array) {
  const blob = aligned(raw);
  return detailsColumns(blob.buffer, blob.byteOffset + HEADER_BYTES, countOf(blob));
}

function detailsColumns(buffer: ArrayBufferLike, at: number, n: number) {
  return { key: new Uint32Array(buffer, at, n), count: new Uint32Array(buffer, at + 4 * n, n) };
}

/**
 * A filter combination's key: the slot bits of its directions, classes and sources (values outside
 * the layout ignored, as cellMask ignores them); -1 when one of them selects nothing.
 */
export function comboKey(
  directions: readonly string[],
  classes: readonly string[],
  sources: readonly string[],
) {
  const bits = (slots: Readonly<Record<string, number | undefined>>, values: readonly string[]) =>
    values.reduce((m, v) => (slotOf(slots, v) < 0 ? m : m | (1 << slotOf(slots, v))), 0);
  const [d, c, s] = [
    bits(DIRECTION_SLOTS, directions),
    bits(CLASS_SLOTS, classes),
    bits(SOURCE_SLOTS, sources),
  ];
  return d === 0 || c === 0 || s === 0 ? -1 : (d << (CLASSES + SOURCES)) | (c << SOURCES) | s;
}

/** Typed arrays need aligned offsets; SQLite's BLOBs arrive as fresh buffers, but copy if not. */
export function aligned(blob: Uint8Array): Uint8Array {
  return blob.byteOffset % 8 === 0 ? blob : new Uint8Array(blob);
}
