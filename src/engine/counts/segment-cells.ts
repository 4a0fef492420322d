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
import { isSegmentCounted, TRIP_PURPOSE_CODES } from "../trips/codes.js";
import { TRACE_SOURCES, VEHICLE_CLASSES, type MatchedTrip } from "../trips/types.js";

/** Traversals shorter than this tell nothing reliable about speed (interpolated times on tiny segments). */
const MIN_SPEED_SAMPLE_S = 1;

/** A segment met in this batch: its length (NaN when the network lacks it) and its segment-months. */
interface SegmentSeen {
  segmentId: number;
  lengthM: number;
  /** Segment-month number + 1 by month number (0 or absent: none yet). */
  groups: number[];
}

/** The local hour a UTC hour falls in: its month (numbered as first seen) and its hour of the week. */
interface LocalHour {
  month: string;
  monthNo: number;
  hourOfWeek: number;
}

const HOUR_MS = 3_600_000;
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
  /** Segment id → its length and its segment-month numbers + 1 by month number (0: none yet). */
  private readonly segmentsSeen = new Map<number, SegmentSeen>();
  private groupSegment: number[] = [];
  private groupMonth: string[] = [];
  /** Segment-month number × TALLY_CELLS + cell → cell entry. */
  private readonly entryOf = new Map<number, number>();
  private entryGroup: number[] = [];
  private entryCell: number[] = [];
  private trips: number[] = [];
  private speedCount: number[] = [];
  private speedSum: number[] = [];
  /**
   * Cell entry × 256 + counter, once per count, summed when drained (appending costs less than a map).
   * Fits 32 bits: entries are keys of a Map, which holds fewer than 2^24.
   */
  private details = new Uint32Array(1024);
  private detailCount = 0;
  /** Local hours by UTC hour, as LocalClock caches them; months numbered as first seen. */
  private readonly hours = new Map<number, LocalHour>();
  /** The last UTC hour asked (a trip's steps mostly fall in one hour). */
  private lastHour = NaN;
  private lastLocal: LocalHour | undefined;
  private readonly months = new Map<string, number>();
  /** A trip's passes counted so far (one Set reused: a Set per trip was garbage). */
  private readonly counted = new Set<number>();

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
    const counted = this.counted;
    counted.clear();
    for (const step of trip.path) {
      const pass = 2 * step.segmentId + (step.forward ? 0 : 1);
      if (counted.has(pass)) continue;
      counted.add(pass);
      const local = this.localHour(step.enterT);
      const cell = (2 * local.hourOfWeek + (step.forward ? 0 : 1)) * CLASS_AND_SOURCES + classAndSource;
      const seen = this.seen(step.segmentId);
      const entry = this.entryFor(seen, local, cell);
      this.trips[entry]++;
      this.addSpeed(entry, seen.lengthM, (step.exitT - step.enterT) / 1000);
      if (purpose >= 0) this.addDetail(entry, purpose);
      if (income >= 0) this.addDetail(entry, income);
    }
  }

  private seen(segmentId: number): SegmentSeen {
    let seen = this.segmentsSeen.get(segmentId);
    if (!seen) {
      // A segment the network does not know is counted without speeds, as before.
      const lengthM = this.network.segmentById(segmentId)?.lengthM ?? NaN;
      this.segmentsSeen.set(segmentId, (seen = { segmentId, lengthM, groups: [] }));
    }
    return seen;
  }

  private entryFor(seen: SegmentSeen, local: LocalHour, cell: number): number {
    let group = (seen.groups[local.monthNo] ?? 0) - 1;
    if (group < 0) {
      group = this.groupSegment.length;
      this.groupSegment.push(seen.segmentId);
      this.groupMonth.push(local.month);
      seen.groups[local.monthNo] = group + 1;
    }
    const key = group * TALLY_CELLS + cell;
    let entry = this.entryOf.get(key);
    if (entry === undefined) {
      entry = this.entryCell.length;
      this.entryOf.set(key, entry);
      this.entryGroup.push(group);
      this.entryCell.push(cell);
      this.trips.push(0);
      this.speedCount.push(0);
      this.speedSum.push(0);
    }
    return entry;
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
      if (this.hours.size > 100_000) this.hours.clear();
      this.hours.set(key, local);
    }
    this.lastHour = key;
    this.lastLocal = local;
    return local;
  }

  private addSpeed(entry: number, lengthM: number, seconds: number): void {
    if (Number.isNaN(lengthM) || seconds < MIN_SPEED_SAMPLE_S) return;
    const kph = lengthM / 1000 / (seconds / 3600);
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

  /** The tallies gathered so far, as columns; the accumulator starts empty again. */
  drainBatch(): SegmentCellBatch {
    const groups = this.groupSegment.length;
    const n = this.entryCell.length;
    // Cells regrouped per segment-month (a counting sort keeps each group's cells in first-touched order).
    const cellStart = new Uint32Array(groups + 1);
    for (const g of this.entryGroup) cellStart[g + 1]++;
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

  /** Equal (entry, counter) keys summed: sorted natively, then counted in runs; spread over the cells' slots. */
  private fillDetails(batch: SegmentCellBatch, slotOf: Uint32Array): void {
    const keys = this.details.subarray(0, this.detailCount).sort();
    const runs: number[] = [];
    for (let i = 0; i < keys.length;) {
      let j = i + 1;
      while (j < keys.length && keys[j] === keys[i]) j++;
      runs.push(i);
      i = j;
    }
    runs.push(keys.length);
    batch.counter = new Uint8Array(runs.length - 1);
    batch.count = new Uint32Array(runs.length - 1);
    const starts = batch.detailStart;
    for (let r = 0; r + 1 < runs.length; r++) starts[slotOf[keys[runs[r]] >>> 8] + 1]++;
    for (let k = 0; k + 1 < starts.length; k++) starts[k + 1] += starts[k];
    const next = starts.slice(0, starts.length - 1);
    for (let r = 0; r + 1 < runs.length; r++) {
      const key = keys[runs[r]];
      const at = next[slotOf[key >>> 8]]++;
      batch.counter[at] = key & 255;
      batch.count[at] = runs[r + 1] - runs[r];
    }
  }

  private reset(): void {
    this.segmentsSeen.clear();
    this.entryOf.clear();
    this.detailCount = 0;
    this.groupSegment = [];
    this.groupMonth = [];
    this.entryGroup = [];
    this.entryCell = [];
    this.trips = [];
    this.speedCount = [];
    this.speedSum = [];
  }

  /** The cells gathered so far as objects (tests, and stores without a packed path); starts empty again. */
  drain(): SegmentStatCell[] {
    return cellsOfBatch(this.drainBatch());
  }
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
