import { StoredFormatError } from "../../engine/trips/codes.js";
import type { VehicleClass } from "../../engine/trips/types.js";
import type { SegmentStatsQuery } from "../../app/ports/store.js";
import type { SegmentMonthColumnsBuilder } from "../../engine/counts/segment-stats.js";
import { addTotalsBySlot, aligned, cellMask, comboKey, SLOTS } from "./segment-month-pack.js";
import type { BlobArena } from "./blob-arena.js";

/**
 * Whole-month rollups: what the commonest metrics call asks (day type "all", day part "all") is
 * precomputed, one row per segment × year, so a year of a segment is one small read instead of
 * twelve months of cells.
 *
 * An entry is one month × one combination of direction set × class group × source set, holding
 * exactly what addTotals gives for that combination over every day and hour of the month —
 * computed by addTotalsBySlot through the same masks, so a rollup answer is bit for bit the full
 * path's, compensated speed sum included. Class groups are each counted class alone and the counts
 * modes' groups (vehicle, truck); other class sets take the full path.
 *
 * BLOB (format 1): header (entries uint32, format uint16, 0 uint16), then speed sums (float64),
 * trips and speed counts (uint32), keys (uint16, comboKey) and months (uint8, 1–12), each as one
 * column, sorted by month and key; only entries with trips. The groups are fixed per format:
 * changing them is a new format whose migration recomputes the rollups from the totals.
 */
const ROLLUP_FORMAT = 1;
const HEADER_BYTES = 8;
const ENTRY_BYTES = 19;
const CLASS_GROUPS: readonly (readonly VehicleClass[])[] = [
  ["personal"],
  ["medium_commercial"],
  ["heavy_commercial"],
  ["bicycle"],
  ["pedestrian"],
  ["personal", "medium_commercial", "heavy_commercial"],
  ["medium_commercial", "heavy_commercial"],
];
const DIRECTION_SETS: ("with" | "against")[][] = [["with"], ["against"], ["with", "against"]];
const SOURCE_SETS = [["lbs"], ["telematics"], ["lbs", "telematics"]];
const WEEK = [1, 2, 3, 4, 5, 6, 7];
const DAY = Array.from({ length: 24 }, (_, hour) => hour);

/**
 * One month's entries in key order, packed: key, trips, speed count and speed sum per entry (all exact
 * as doubles). A batch holds thousands of these until its rollups are written: as ~20 entry objects
 * each, they outlived V8's young generation (~6 MB copied into the old one per 4,000-trip ingest).
 */
export type MonthEntries = Float64Array;
const ENTRY_FIELDS = 4;

interface Combo {
  key: number;
  mask: Uint8Array;
}
let combos: Combo[] | undefined;
let keys: Set<number> | undefined;

/** Every precomputed combination with its cell mask, in key order; built on first use. */
function allCombos(): Combo[] {
  combos ??= DIRECTION_SETS.flatMap((directions) =>
    CLASS_GROUPS.flatMap((vehicleClasses) =>
      SOURCE_SETS.map((sources) => ({
        key: comboKey(directions, vehicleClasses, sources),
        mask: cellMask({ daysOfWeek: WEEK, hours: DAY, directions, vehicleClasses, sources }),
      })),
    ),
  ).sort((a, b) => a.key - b.key);
  return combos;
}

/**
 * The rollup key a query can be answered from: every day of the week and every hour asked, and a
 * precomputed combination; null otherwise (the full path then sums the cells).
 */
export function rollupKey(
  q: Pick<SegmentStatsQuery, "daysOfWeek" | "hours" | "directions" | "vehicleClasses" | "sources">,
): number | null {
  const covers = (asked: readonly number[], all: number[]) => all.every((v) => asked.includes(v));
  if (!covers(q.daysOfWeek, WEEK) || !covers(q.hours, DAY)) return null;
  const key = comboKey(q.directions, q.vehicleClasses, q.sources);
  keys ??= new Set(allCombos().map((c) => c.key));
  return keys.has(key) ? key : null;
}

let combosOfSlot: number[][] | undefined;

/**
 * For each direction × class × source slot, the combinations (indexes into allCombos) counting it:
 * every combination covers the whole week and day, so that is all its mask says about a cell.
 */
function combosBySlot(): number[][] {
  combosOfSlot ??= Array.from({ length: SLOTS }, (_, slot) =>
    allCombos().flatMap((combo, k) => (combo.mask[slot] === 1 ? [k] : [])),
  );
  return combosOfSlot;
}

/**
 * The entries of one month from its totals BLOB: every combination summed in one pass
 * (addTotalsBySlot), bit for bit what addTotals gives through each combination's mask.
 */
export function monthRollup(totals: Uint8Array, arena?: BlobArena): MonthEntries {
  const combos = allCombos();
  const { tripSum, countSum, sum, error } = addTotalsBySlot(totals, combosBySlot(), combos.length);
  let n = 0;
  for (let k = 0; k < combos.length; k++) if (tripSum[k] > 0) n++;
  const entries = arena ? arena.float64s(ENTRY_FIELDS * n) : new Float64Array(ENTRY_FIELDS * n);
  let at = 0;
  for (let k = 0; k < combos.length; k++)
    if (tripSum[k] > 0) {
      entries[at++] = combos[k].key;
      entries[at++] = tripSum[k];
      entries[at++] = countSum[k];
      entries[at++] = sum[k] + error[k];
    }
  return entries;
}

/**
 * One month's rollup BLOB (month 1–12) from its totals BLOB: what a part of a segment-month adds to its
 * year's rollup (counts.ts, "Parts").
 */
export function monthRollupBlob(totals: Uint8Array, month: number, arena?: BlobArena): Buffer {
  const entries = monthRollup(totals, arena);
  return packedRollup(entries.length / ENTRY_FIELDS, arena, (put) => {
    for (let j = 0; j < entries.length; j += ENTRY_FIELDS)
      put(month, entries[j], entries[j + 1], entries[j + 2], entries[j + 3]);
  });
}

/** A segment-year whose months an ingest batch changed: their new entries by month number. */
export interface ChangedYear {
  segmentId: number;
  year: string;
  months: Map<number, MonthEntries>;
}

/**
 * The segment-years an ingest batch touched, each gathered once and written once by the store; with an
 * arena, their entries and BLOBs are cut from it.
 */
export class ChangedYears {
  protected readonly years = new Map<string, ChangedYear>();

  constructor(
    readonly country: string,
    private readonly arena?: BlobArena,
  ) {}

  get size(): number {
    return this.years.size;
  }

  /**
   * A segment-month's totals: what a batch added to it (SQLite's ingest, whose rollups add up with
   * addRollups), or all it holds (replacing the stored month: PostgreSQL's ingest).
   */
  set(segmentId: number, month: string, totals: Uint8Array): void {
    const [year, m] = [month.slice(0, 4), Number(month.slice(5, 7))];
    const id = `${segmentId}|${year}`;
    let entry = this.years.get(id);
    if (!entry) this.years.set(id, (entry = { segmentId, year, months: new Map() }));
    entry.months.set(m, monthRollup(totals, this.arena));
  }

  /** replaceMonths, into the arena when there is one. */
  protected replaceMonths(stored: Uint8Array | undefined, months: Map<number, MonthEntries>): Buffer {
    return replaceMonths(stored, months, this.arena);
  }
}

/** Asked months (YYYY-MM) by year: index = month 1–12, value its key, undefined where not asked. */
export function monthsByYear(months: readonly string[]): Map<string, (string | undefined)[]> {
  const wanted = new Map<string, (string | undefined)[]>();
  for (const m of months) {
    const year = m.slice(0, 4);
    if (!wanted.has(year)) wanted.set(year, new Array<string | undefined>(13));
    wanted.get(year)![Number(m.slice(5, 7))] = m;
  }
  return wanted;
}

/**
 * A segment-year's rollup, with some months replaced (PostgreSQL's ingest and migration; with nothing stored,
 * the new entries alone, which SQLite's ingest adds to the stored rollup): month by month, the new entries or
 * else the stored ones (both in key order, so the entries stay sorted by month and key).
 */
export function replaceMonths(
  stored: Uint8Array | undefined,
  months: Map<number, MonthEntries>,
  arena?: BlobArena,
): Buffer {
  const old = stored ? view(stored) : undefined;
  let n = 0;
  for (const entries of months.values()) n += entries.length / ENTRY_FIELDS;
  if (old) for (let i = 0; i < old.month.length; i++) if (!months.has(old.month[i])) n++;
  return packedRollup(n, arena, (put) => {
    let i = 0;
    for (let month = 1; month <= 12; month++) {
      const fresh = months.get(month);
      if (fresh)
        for (let j = 0; j < fresh.length; j += ENTRY_FIELDS)
          put(month, fresh[j], fresh[j + 1], fresh[j + 2], fresh[j + 3]);
      for (; old && i < old.month.length && old.month[i] === month; i++)
        if (!fresh) put(month, old.key[i], old.trips[i], old.speedCount[i], old.speedSum[i]);
    }
  });
}

/**
 * Two rollups of one segment-year as one: an entry of the same month and key in both is summed, the others
 * kept (both in month and key order). The speed sums are whole steps of 1/1024 km/h and add up exactly, so
 * the rollup of what two batches added is what monthRollup gives for their cells together (counts.ts, "Parts").
 */
export function addRollups(stored: Uint8Array, added: Uint8Array, arena?: BlobArena): Buffer {
  const [a, b] = [view(stored), view(added)];
  const sum = (put: PutEntry) => {
    for (let i = 0, j = 0; i < a.month.length || j < b.month.length;) {
      // Entries ordered by month, then key: one number each.
      const at = i < a.month.length ? a.month[i] * 65_536 + a.key[i] : Infinity;
      const bt = j < b.month.length ? b.month[j] * 65_536 + b.key[j] : Infinity;
      let trips = 0;
      let speedCount = 0;
      let speedSum = 0;
      if (at <= bt) {
        trips = a.trips[i];
        speedCount = a.speedCount[i];
        speedSum = a.speedSum[i];
        i++;
      }
      if (bt <= at) {
        trips += b.trips[j];
        speedCount += b.speedCount[j];
        speedSum += b.speedSum[j];
        j++;
      }
      const t = Math.min(at, bt);
      put(Math.floor(t / 65_536), t % 65_536, trips, speedCount, speedSum);
    }
  };
  let n = 0;
  sum(() => n++);
  return packedRollup(n, arena, sum);
}

type PutEntry = (month: number, key: number, trips: number, speedCount: number, speedSumKph: number) => void;

/** A rollup BLOB of n entries, which `fill` puts in month and key order. */
function packedRollup(n: number, arena: BlobArena | undefined, fill: (put: PutEntry) => void): Buffer {
  const length = HEADER_BYTES + pad8(ENTRY_BYTES * n);
  const blob = arena ? arena.take(length).blob : Buffer.alloc(length);
  new Uint32Array(blob.buffer, blob.byteOffset, 1)[0] = n;
  const formats = new Uint16Array(blob.buffer, blob.byteOffset + 4, 2);
  formats[0] = ROLLUP_FORMAT;
  formats[1] = 0;
  const r = view(blob);
  let at = 0;
  fill((month, key, trips, speedCount, speedSumKph) => {
    r.speedSum[at] = speedSumKph;
    r.trips[at] = trips;
    r.speedCount[at] = speedCount;
    r.key[at] = key;
    r.month[at] = month;
    at++;
  });
  if (at !== n) throw new StoredFormatError("segment rollup BLOB whose entries are not in month order");
  return blob;
}

const pad8 = (n: number) => Math.ceil(n / 8) * 8;

/**
 * A segment-year's rollup as the caches keep it: its entries regrouped by key (months ascending within
 * each), so a call finds its key's few entries by a binary search instead of scanning all of them (a
 * year of 12 keys is 144 entries: the scan cost ~1.2 ms per call over 1,000 segments).
 */
export interface RollupByKey {
  /** The keys with entries, ascending; key k's entries are keyStart[k] … keyStart[k + 1] - 1. */
  keys: Uint16Array;
  keyStart: Uint32Array;
  month: Uint8Array;
  trips: Uint32Array;
  speedCount: Uint32Array;
  speedSum: Float64Array;
}

/** A rollup BLOB decoded into one buffer, regrouped by key (a stable counting sort keeps the month order). */
export function rollupByKey(raw: Uint8Array): RollupByKey {
  const r = view(raw);
  const n = r.key.length;
  const distinct = new Set(r.key);
  const k = distinct.size;
  const buffer = new ArrayBuffer(16 * n + pad8(4 * (k + 1)) + pad8(2 * k) + pad8(n));
  const speedSum = new Float64Array(buffer, 0, n);
  const trips = new Uint32Array(buffer, 8 * n, n);
  const speedCount = new Uint32Array(buffer, 12 * n, n);
  const keyStart = new Uint32Array(buffer, 16 * n, k + 1);
  const keys = new Uint16Array(buffer, 16 * n + pad8(4 * (k + 1)), k);
  const month = new Uint8Array(buffer, 16 * n + pad8(4 * (k + 1)) + pad8(2 * k), n);
  keys.set([...distinct].sort((a, b) => a - b));
  const slot = new Map<number, number>();
  keys.forEach((key, i) => slot.set(key, i));
  for (let i = 0; i < n; i++) keyStart[slot.get(r.key[i])! + 1]++;
  for (let i = 0; i < k; i++) keyStart[i + 1] += keyStart[i];
  const next = keyStart.slice(0, k);
  for (let i = 0; i < n; i++) {
    const at = next[slot.get(r.key[i])!]++;
    speedSum[at] = r.speedSum[i];
    trips[at] = r.trips[i];
    speedCount[at] = r.speedCount[i];
    month[at] = r.month[i];
  }
  return { keys, keyStart, month, trips, speedCount, speedSum };
}

/** Bytes a decoded rollup holds (cache budgets). */
export const rollupBytes = (r: RollupByKey) => r.speedSum.buffer.byteLength;

/**
 * Calls `found` for each month of a segment-year's rollup that `wanted` names (index = month 1–12, value
 * its YYYY-MM key) and has trips for `key`, in month order, with what addTotals would have added up for it.
 */
export function eachRollupMonth(
  r: RollupByKey,
  key: number,
  wanted: readonly (string | undefined)[],
  found: (month: string, trips: number, speedCount: number, speedSumKph: number) => void,
): void {
  const k = keyIndex(r, key);
  if (k < 0) return;
  for (let i = r.keyStart[k]; i < r.keyStart[k + 1]; i++) {
    const month = wanted[r.month[i]];
    if (month !== undefined) found(month, r.trips[i], r.speedCount[i], r.speedSum[i]);
  }
}

/**
 * The entries of `key` whose month is asked, added to `out` as one row each: `monthIndex` maps month
 * 1–12 to the row's month index, −1 where not asked. The columns' form of eachRollupMonth.
 */
export function addRollupMonths(
  r: RollupByKey,
  key: number,
  segmentId: number,
  monthIndex: Int16Array,
  out: SegmentMonthColumnsBuilder,
): void {
  const k = keyIndex(r, key);
  if (k < 0) return;
  for (let i = r.keyStart[k]; i < r.keyStart[k + 1]; i++) {
    const m = monthIndex[r.month[i]];
    if (m >= 0) out.add(segmentId, m, r.trips[i], r.speedCount[i], r.speedSum[i]);
  }
}

/** Month 1–12 → index into `months` (sorted YYYY-MM, once each) for each year asked; −1 where not asked. */
export function monthIndexByYear(months: readonly string[]): Map<string, Int16Array> {
  const byYear = new Map<string, Int16Array>();
  months.forEach((m, i) => {
    const year = m.slice(0, 4);
    let index = byYear.get(year);
    if (!index) byYear.set(year, (index = new Int16Array(13).fill(-1)));
    index[Number(m.slice(5, 7))] = i;
  });
  return byYear;
}

/** The index of `key` in the rollup's keys (binary search), −1 when it has no entries. */
function keyIndex(r: RollupByKey, key: number): number {
  let [lo, hi] = [0, r.keys.length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (r.keys[mid] < key) lo = mid + 1;
    else if (r.keys[mid] > key) hi = mid - 1;
    else return mid;
  }
  return -1;
}

function view(raw: Uint8Array) {
  const blob = aligned(raw);
  if (blob.byteLength < HEADER_BYTES) throw new StoredFormatError("segment rollup BLOB without its header");
  const n = new Uint32Array(blob.buffer, blob.byteOffset, 1)[0];
  const format = new Uint16Array(blob.buffer, blob.byteOffset + 4, 1)[0];
  if (format !== ROLLUP_FORMAT)
    throw new StoredFormatError(
      `segment rollup BLOB of format ${format} (this version reads ${ROLLUP_FORMAT}): upgrade to read it`,
    );
  const at = blob.byteOffset + HEADER_BYTES;
  return {
    speedSum: new Float64Array(blob.buffer, at, n),
    trips: new Uint32Array(blob.buffer, at + 8 * n, n),
    speedCount: new Uint32Array(blob.buffer, at + 12 * n, n),
    key: new Uint16Array(blob.buffer, at + 16 * n, n),
    month: new Uint8Array(blob.buffer, at + 18 * n, n),
  };
}
