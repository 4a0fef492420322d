import type { SegmentStatCell } from "./segment-stats.js";
import {
  INCOME_COUNTER,
  MAX_INCOME_BAND,
  PURPOSE_COUNTER,
  SPEED_BIN_KPH,
  SPEED_BINS,
} from "./segment-stats.js";
import type { Network } from "../network/network.js";
import type { LocalClock } from "../time.js";
import { NumberIndex } from "./number-index.js";
import { isSegmentCounted, TRIP_PURPOSE_CODES } from "../trips/codes.js";
import { TRACE_SOURCES, VEHICLE_CLASSES, type MatchedTrip } from "../trips/types.js";

/** Traversals shorter than this tell nothing reliable about speed (interpolated times on tiny segments). */
const MIN_SPEED_SAMPLE_S = 1;

/**
 * Traversal speeds are tallied in steps of 1/1024 km/h. A sum of such steps is exact in a float64 (below
 * 2^43 km/h), so the stored sums are the same however the trips are grouped into batches or threads and
 * whatever order they are added in; a speed moves by at most 0.0005 km/h.
 */
const SPEED_STEPS_PER_KPH = 1024;

/** A traversal's speed in km/h, in whole steps of 1/SPEED_STEPS_PER_KPH. */
function tallySpeedKph(lengthM: number, seconds: number): number {
  return Math.round(((lengthM / 1000) * 3600 * SPEED_STEPS_PER_KPH) / seconds) / SPEED_STEPS_PER_KPH;
}

/** The local hour a UTC hour falls in: its month (numbered as first seen) and its hour of the week. */
interface LocalHour {
  month: string;
  monthNo: number;
  hourOfWeek: number;
}

const HOUR_MS = 3_600_000;
/**
 * Room for month numbers in a segment-month key (segment number × MONTH_NOS + month number): months
 * are numbered per batch, and 5,461 years of them fit.
 */
const MONTH_NOS = 1 << 16;
const CLASS_AND_SOURCES = VEHICLE_CLASSES.length * TRACE_SOURCES.length;

/**
 * A cell's number within its segment-month: ((hour of week × 2 + direction) × classes + class) ×
 * sources + source, hour of week = (ISO weekday − 1) × 24 + hour, direction 0 with the geometry,
 * class and source by their place in VEHICLE_CLASSES and TRACE_SOURCES. The store maps it onto its
 * own layout.
 */
export const TALLY_CELLS = 7 * 24 * 2 * CLASS_AND_SOURCES;

/** What a tally cell number stands for. */
export function tallyCellFields(
  cell: number,
): Pick<SegmentStatCell, "dayOfWeek" | "hour" | "direction" | "vehicleClass" | "source"> {
  const source = cell % TRACE_SOURCES.length;
  const vehicleClass = Math.floor(cell / TRACE_SOURCES.length) % VEHICLE_CLASSES.length;
  const hourAndDirection = Math.floor(cell / CLASS_AND_SOURCES);
  const hourOfWeek = hourAndDirection >> 1;
  return {
    dayOfWeek: Math.floor(hourOfWeek / 24) + 1,
    hour: hourOfWeek % 24,
    direction: hourAndDirection % 2 === 0 ? "with" : "against",
    vehicleClass: VEHICLE_CLASSES[vehicleClass],
    source: TRACE_SOURCES[source],
  };
}

/**
 * One batch of per-segment tallies as typed-array columns, grouped per segment × month: what the
 * segment-stats port adds to its packed counters without an object per cell.
 */
export interface SegmentCellBatch {
  /** Segment-months in the order first touched. */
  segmentIds: Float64Array;
  /** YYYY-MM of each segment-month. */
  months: string[];
  /** Cells of segment-month g: cellStart[g] … cellStart[g + 1], in the order first touched. */
  cellStart: Uint32Array;
  /** A cell's number (TALLY_CELLS) and its sums; each cell appears once per segment-month. */
  cell: Uint16Array;
  trips: Uint32Array;
  speedCount: Uint32Array;
  /** Traversal speeds (km/h) added in trip order from 0. */
  speedSumKph: Float64Array;
  /** Detail counters of cell k: detailStart[k] … detailStart[k + 1], counters ascending (numbers: segment-stats.ts). */
  detailStart: Uint32Array;
  counter: Uint8Array;
  count: Uint32Array;
}

/**
 * Folds matched trips into per-segment cells (segment × month × day of week × hour × direction ×
 * vehicle class × source) in local time, so segment counts are precomputed at ingest and metrics
 * queries never scan trips. Cells are numbers in growable columns, found by number: an object per
 * cell (with a histogram array and two dictionaries), decoded again into the store's counters, cost
 * more than matching the trip.
 */
export class SegmentCellAccumulator {
  /** Segment id → its number in this batch (segments numbered as first met). */
  private readonly segmentNo = new NumberIndex();
  /** Per segment number: its id and length (NaN when the network lacks it). */
  private segmentIds: number[] = [];
  private lengthsM: number[] = [];
  /** Per segment number × 2 + direction: the serial of the last trip that counted that pass. */
  private countedBy: number[] = [];
  /** Per segment number: the month number and group of its last pass. */
  private lastMonthNo: number[] = [];
  private lastGroup: number[] = [];
  private tripSerial = 0;
  /** (segment number × MONTH_NOS + month number) → segment-month (group) number, as first met. */
  private readonly groupNo = new NumberIndex();
  private groupSegment: number[] = [];
  private groupMonth: string[] = [];
  /** (group × TALLY_CELLS + cell) → cell entry, as first met. */
  private readonly entryNo = new NumberIndex(12);
  private entryCount = 0;
  private entryGroup = new Uint32Array(1024);
  private entryCell = new Uint16Array(1024);
  private trips = new Uint32Array(1024);
  private speedCount = new Uint32Array(1024);
  private speedSum = new Float64Array(1024);
  /**
   * Cell entry × 256 + counter, once per count, summed when drained (appending costs less than a map).
   * Fits 32 bits while a batch has fewer than 2^24 cells (140,000 for 4,000 trips on Monaco).
   */
  private details = new Uint32Array(1024);
  private detailCount = 0;
  /** Local hours by UTC hour, as LocalClock caches them; months numbered as first seen in the batch. */
  private readonly hours = new Map<number, LocalHour>();
  /** The last UTC hour asked (a trip's steps mostly fall in one hour). */
  private lastHour = NaN;
  private lastLocal: LocalHour | undefined;
  private readonly months = new Map<string, number>();

  constructor(
    private readonly network: Network,
    private readonly clock: LocalClock,
  ) {}

  /**
   * A trip counts once per segment and direction, in the hour of its first pass: a matched path may
   * run a short segment forward, back and forward again (GPS jitter at a junction), and counting
   * passes would report more trips than were made.
   */
  addTrip(trip: MatchedTrip): void {
    if (!isSegmentCounted(trip.vehicleClass)) return;
    const classAndSource =
      VEHICLE_CLASSES.indexOf(trip.vehicleClass) * TRACE_SOURCES.length + TRACE_SOURCES.indexOf(trip.source);
    const purpose = purposeCounterOf(trip);
    const income = incomeCounterOf(trip);
    const serial = ++this.tripSerial;
    for (const step of trip.path) {
      const segment = this.segmentNoOf(step.segmentId);
      const direction = step.forward ? 0 : 1;
      const pass = 2 * segment + direction;
      if (this.countedBy[pass] === serial) continue;
      this.countedBy[pass] = serial;
      const local = this.localHour(step.enterT);
      const cell = (2 * local.hourOfWeek + direction) * CLASS_AND_SOURCES + classAndSource;
      const entry = this.entryFor(segment, local, cell);
      this.trips[entry]++;
      this.addSpeed(entry, this.lengthsM[segment], (step.exitT - step.enterT) / 1000);
      if (purpose >= 0) this.addDetail(entry, purpose);
      if (income >= 0) this.addDetail(entry, income);
    }
  }

  private segmentNoOf(segmentId: number): number {
    const segment = this.segmentNo.slotOf(segmentId);
    if (segment === this.segmentIds.length) {
      // A segment the network does not know is counted without speeds, as before.
      this.segmentIds.push(segmentId);
      this.lengthsM.push(this.network.segmentById(segmentId)?.lengthM ?? NaN);
      this.countedBy.push(0, 0);
      this.lastMonthNo.push(-1);
      this.lastGroup.push(-1);
    }
    return segment;
  }

  private entryFor(segment: number, local: LocalHour, cell: number): number {
    const group = this.groupOf(segment, local);
    // A small integer (hashed fastest) while a batch has fewer than 456,000 segment-months; exact beyond.
    const entry = this.entryNo.slotOf(group * TALLY_CELLS + cell);
    if (entry === this.entryCount) {
      if (entry === this.trips.length) this.growEntries();
      this.entryCount++;
      this.entryGroup[entry] = group;
      this.entryCell[entry] = cell;
      this.trips[entry] = 0;
      this.speedCount[entry] = 0;
      this.speedSum[entry] = 0;
    }
    return entry;
  }

  /** The segment-month's group number; a segment's passes in a batch mostly fall in one month. */
  private groupOf(segment: number, local: LocalHour): number {
    if (this.lastMonthNo[segment] === local.monthNo) return this.lastGroup[segment];
    const group = this.groupNo.slotOf(segment * MONTH_NOS + local.monthNo);
    if (group === this.groupSegment.length) {
      this.groupSegment.push(this.segmentIds[segment]);
      this.groupMonth.push(local.month);
    }
    this.lastMonthNo[segment] = local.monthNo;
    this.lastGroup[segment] = group;
    return group;
  }

  private localHour(t: number): LocalHour {
    const key = Math.floor(t / HOUR_MS);
    if (key === this.lastHour) return this.lastLocal!;
    let local = this.hours.get(key);
    if (!local) {
      const { day, weekday, hour } = this.clock.at(t);
      const month = day.slice(0, 7);
      let monthNo = this.months.get(month);
      if (monthNo === undefined) this.months.set(month, (monthNo = this.months.size));
      local = { month, monthNo, hourOfWeek: (weekday - 1) * 24 + hour };
      this.hours.set(key, local);
    }
    this.lastHour = key;
    this.lastLocal = local;
    return local;
  }

  private addSpeed(entry: number, lengthM: number, seconds: number): void {
    if (Number.isNaN(lengthM) || seconds < MIN_SPEED_SAMPLE_S) return;
    const kph = tallySpeedKph(lengthM, seconds);
    this.speedSum[entry] += kph;
    this.speedCount[entry]++;
    this.addDetail(entry, Math.min(SPEED_BINS - 1, Math.floor(kph / SPEED_BIN_KPH)));
  }

  private addDetail(entry: number, counter: number): void {
    if (this.detailCount === this.details.length) {
      const grown = new Uint32Array(2 * this.details.length);
      grown.set(this.details);
      this.details = grown;
    }
    this.details[this.detailCount++] = entry * 256 + counter;
  }

  private growEntries(): void {
    const grown = <T extends Uint32Array | Uint16Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(2 * a.length);
      b.set(a);
      return b;
    };
    this.entryGroup = grown(this.entryGroup);
    this.entryCell = grown(this.entryCell);
    this.trips = grown(this.trips);
    this.speedCount = grown(this.speedCount);
    this.speedSum = grown(this.speedSum);
  }

  /** The tallies gathered so far, as columns; the accumulator starts empty again. */
  drainBatch(): SegmentCellBatch {
    const groups = this.groupSegment.length;
    const n = this.entryCount;
    // Cells regrouped per segment-month (a counting sort keeps each group's cells in first-touched order).
    const cellStart = new Uint32Array(groups + 1);
    for (let e = 0; e < n; e++) cellStart[this.entryGroup[e] + 1]++;
    for (let g = 0; g < groups; g++) cellStart[g + 1] += cellStart[g];
    const slotOf = new Uint32Array(n);
    const next = cellStart.slice(0, groups);
    for (let e = 0; e < n; e++) slotOf[e] = next[this.entryGroup[e]]++;
    const batch: SegmentCellBatch = {
      segmentIds: Float64Array.from(this.groupSegment),
      months: this.groupMonth,
      cellStart,
      cell: new Uint16Array(n),
      trips: new Uint32Array(n),
      speedCount: new Uint32Array(n),
      speedSumKph: new Float64Array(n),
      detailStart: new Uint32Array(n + 1),
      counter: new Uint8Array(0),
      count: new Uint32Array(0),
    };
    for (let e = 0; e < n; e++) {
      const k = slotOf[e];
      batch.cell[k] = this.entryCell[e];
      batch.trips[k] = this.trips[e];
      batch.speedCount[k] = this.speedCount[e];
      batch.speedSumKph[k] = this.speedSum[e];
    }
    this.fillDetails(batch, slotOf);
    this.reset();
    return batch;
  }

  /**
   * Equal (entry, counter) keys summed, counters ascending per cell: the keys are bucketed by cell slot (a
   * counting sort, linear), then each cell's few counters are ordered and counted in runs. A native sort of
   * all keys (~300,000 for 4,000 trips) made the drain ~1.3× as long, at the end of the batch while matching
   * workers wait.
   */
  private fillDetails(batch: SegmentCellBatch, slotOf: Uint32Array): void {
    const n = this.detailCount;
    const keys = this.details;
    const cells = batch.cell.length;
    const rawStart = new Uint32Array(cells + 1);
    for (let i = 0; i < n; i++) rawStart[slotOf[keys[i] >>> 8] + 1]++;
    for (let k = 0; k < cells; k++) rawStart[k + 1] += rawStart[k];
    const next = rawStart.slice(0, cells);
    const raw = new Uint8Array(n);
    for (let i = 0; i < n; i++) raw[next[slotOf[keys[i] >>> 8]]++] = keys[i] & 255;
    const counter = new Uint8Array(n);
    const count = new Uint32Array(n);
    const starts = batch.detailStart;
    let runs = 0;
    for (let k = 0; k < cells; k++) {
      runs = countRuns(raw, rawStart[k], rawStart[k + 1], counter, count, runs);
      starts[k + 1] = runs;
    }
    batch.counter = counter.slice(0, runs);
    batch.count = count.slice(0, runs);
  }

  private reset(): void {
    this.segmentNo.clear();
    this.groupNo.clear();
    this.entryNo.clear();
    this.segmentIds = [];
    this.lengthsM = [];
    this.countedBy = [];
    this.lastMonthNo = [];
    this.lastGroup = [];
    this.months.clear();
    this.hours.clear();
    this.lastHour = NaN;
    this.detailCount = 0;
    this.groupSegment = [];
    this.groupMonth = [];
    this.entryCount = 0;
  }

  /** The cells gathered so far as objects (tests, and stores without a packed path); starts empty again. */
  drain(): SegmentStatCell[] {
    return cellsOfBatch(this.drainBatch());
  }
}

/** Cells with more counters than this count them by value instead of sorting them in place. */
const SORT_IN_PLACE_MAX = 32;
const byValue = new Uint32Array(256);

/**
 * The counters raw[from … to) sorted in place and written as runs (counter, how many) from `at` of
 * `counter`/`count`; answers where the runs end.
 */
function countRuns(
  raw: Uint8Array,
  from: number,
  to: number,
  counter: Uint8Array,
  count: Uint32Array,
  at: number,
): number {
  if (to - from > SORT_IN_PLACE_MAX) {
    for (let i = from; i < to; i++) byValue[raw[i]]++;
    for (let v = 0; v < 256; v++)
      if (byValue[v] > 0) {
        counter[at] = v;
        count[at++] = byValue[v];
        byValue[v] = 0;
      }
    return at;
  }
  for (let i = from + 1; i < to; i++) {
    const v = raw[i];
    let j = i - 1;
    while (j >= from && raw[j] > v) raw[j + 1] = raw[j--];
    raw[j + 1] = v;
  }
  for (let i = from; i < to; i++)
    if (i > from && raw[i] === raw[i - 1]) count[at - 1]++;
    else {
      counter[at] = raw[i];
      count[at++] = 1;
    }
  return at;
}

/** A batch as one object per cell, segment-months in order, each one's cells in order. */
export function cellsOfBatch(batch: SegmentCellBatch): SegmentStatCell[] {
  const cells: SegmentStatCell[] = [];
  for (let g = 0; g < batch.months.length; g++)
    for (let k = batch.cellStart[g]; k < batch.cellStart[g + 1]; k++) {
      const cell: SegmentStatCell = {
        segmentId: batch.segmentIds[g],
        month: batch.months[g],
        ...tallyCellFields(batch.cell[k]),
        trips: batch.trips[k],
        speedSumKph: batch.speedSumKph[k],
        speedCount: batch.speedCount[k],
        speedHistogram: [],
        purposes: {},
        incomes: {},
      };
      for (let d = batch.detailStart[k]; d < batch.detailStart[k + 1]; d++)
        addCounter(cell, batch.counter[d], batch.count[d]);
      cells.push(cell);
    }
  return cells;
}

function addCounter(cell: SegmentStatCell, counter: number, count: number): void {
  if (counter < SPEED_BINS) {
    while (cell.speedHistogram.length <= counter) cell.speedHistogram.push(0);
    cell.speedHistogram[counter] += count;
  } else if (counter < INCOME_COUNTER) {
    const purpose = Object.keys(TRIP_PURPOSE_CODES).find(
      (p) => TRIP_PURPOSE_CODES[p as keyof typeof TRIP_PURPOSE_CODES] === counter - PURPOSE_COUNTER,
    )!;
    cell.purposes[purpose] = (cell.purposes[purpose] ?? 0) + count;
  } else cell.incomes[counter - INCOME_COUNTER] = (cell.incomes[counter - INCOME_COUNTER] ?? 0) + count;
}

/** The trip's purpose counter, -1 without one; throws on a purpose the counters have no place for. */
function purposeCounterOf(trip: MatchedTrip): number {
  if (!trip.purpose) return -1;
  const code = Object.hasOwn(TRIP_PURPOSE_CODES, trip.purpose) ? TRIP_PURPOSE_CODES[trip.purpose] : -1;
  if (code < 0) throw new RangeError(`unknown trip purpose "${trip.purpose}"`);
  return PURPOSE_COUNTER + code;
}

/** Band 0 is a real band (the generator's lowest); only a missing or negative band is unknown (-1). */
function incomeCounterOf(trip: MatchedTrip): number {
  const band = trip.incomeBand;
  if (band === undefined || band < 0) return -1;
  if (!Number.isInteger(band) || band > MAX_INCOME_BAND)
    throw new RangeError(`income band "${band}" out of range`);
  return INCOME_COUNTER + band;
}
