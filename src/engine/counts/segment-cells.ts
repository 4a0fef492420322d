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
import { grown } from "../typed-arrays.js";
import { isSegmentCounted, TRIP_PURPOSE_CODES } from "../trips/codes.js";
import { TRACE_SOURCES, VEHICLE_CLASSES, type MatchedTrip } from "../trips/types.js";
import { ColumnarPathTrip } from "../trips/path-columns.js";

/** Traversals shorter than this tell nothing reliable about speed (interpolated times on tiny segments). */
const MIN_SPEED_SAMPLE_S = 1;

/**
 * Traversal speeds are tallied in steps of 1/1024 km/h. A sum of such steps is exact in a float64 (below
 * 2^43 km/h), so the stored sums are the same however the trips are grouped into batches or threads and
 * whatever order they are added in; a speed moves by at most 0.0005 km/h.
 */
const SPEED_STEPS_PER_KPH = 1024;

/** A speed (or sum of speeds) in km/h rounded to whole steps of 1/SPEED_STEPS_PER_KPH, as tallies keep them. */
export const inSpeedSteps = (kph: number) => Math.round(kph * SPEED_STEPS_PER_KPH) / SPEED_STEPS_PER_KPH;

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
 * queries never scan trips. An object per cell (with a histogram array and two dictionaries), decoded
 * again into the store's counters, cost more than matching the trip; so each counted pass is appended
 * to growable columns as it comes (its segment-month, cell, speed and trip), and the passes are summed
 * into cells when the batch is drained, a segment-month at a time. Finding each pass's cell as it came
 * (an open-addressing table of ~140,000 cells for 4,000 trips on Monaco) cost 2.7× the appending.
 */
export class SegmentCellAccumulator {
  /** Segment id → its number in this batch (segments numbered as first met). */
  private readonly segmentNo = new NumberIndex();
  /**
   * Per segment number: its id and length (NaN when the network lacks it), the serial of the last trip that
   * counted each direction's pass (at 2 × number + direction), and the month number and group of its last
   * pass. Typed columns, like the passes: in JS arrays begun empty each batch, the tally code was
   * deoptimised and compiled again batch after batch (a value of a kind the new arrays had not held yet).
   */
  private segments = 0;
  private segmentIds = new Float64Array(1024);
  private lengthsM = new Float64Array(1024);
  private countedBy = new Uint32Array(2048);
  private lastMonthNo = new Int32Array(1024);
  private lastGroup = new Int32Array(1024);
  private tripSerial = 0;
  /** (segment number × MONTH_NOS + month number) → segment-month (group) number, as first met. */
  private readonly groupNo = new NumberIndex();
  private groups = 0;
  private groupSegment = new Float64Array(1024);
  private groupMonth: string[] = [];
  /** Per trip (serial - 1): its purpose and income counters, -1 without. */
  private tripPurpose = new Int16Array(1024);
  private tripIncome = new Int16Array(1024);
  /** Per counted pass, in trip order: its group, its cell number (TALLY_CELLS), its speed (NaN: none), its trip. */
  private passes = 0;
  private passGroup = new Uint32Array(4096);
  private passCell = new Uint16Array(4096);
  private passKph = new Float64Array(4096);
  private passTrip = new Uint32Array(4096);
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
    if (this.tripSerial === this.tripPurpose.length) {
      this.tripPurpose = grown(this.tripPurpose);
      this.tripIncome = grown(this.tripIncome);
    }
    this.tripPurpose[this.tripSerial] = purposeCounterOf(trip);
    this.tripIncome[this.tripSerial] = incomeCounterOf(trip);
    const serial = ++this.tripSerial;
    // Two loops, not one visitor of both kinds of path (TripColumnsBuilder.add says why).
    const steps = ColumnarPathTrip.stepsOf(trip);
    if (steps)
      for (let j = steps.from; j < steps.to; j++)
        this.addPass(
          serial,
          classAndSource,
          steps.segmentId[j],
          steps.forward[j] === 1,
          steps.enterT[j],
          steps.exitT[j],
        );
    else
      for (const step of trip.path)
        this.addPass(serial, classAndSource, step.segmentId, step.forward, step.enterT, step.exitT);
  }

  /** One step of trip number `serial`, unless the trip passed its segment that way already. */
  private addPass(
    serial: number,
    classAndSource: number,
    segmentId: number,
    forward: boolean,
    enterT: number,
    exitT: number,
  ): void {
    const segment = this.segmentNoOf(segmentId);
    const direction = forward ? 0 : 1;
    const pass = 2 * segment + direction;
    if (this.countedBy[pass] === serial) return;
    this.countedBy[pass] = serial;
    const local = this.localHour(enterT);
    if (this.passes === this.passGroup.length) this.growPasses();
    const at = this.passes++;
    this.passGroup[at] = this.groupOf(segment, local);
    this.passCell[at] = (2 * local.hourOfWeek + direction) * CLASS_AND_SOURCES + classAndSource;
    this.passKph[at] = speedKphOf(this.lengthsM[segment], (exitT - enterT) / 1000);
    this.passTrip[at] = serial - 1;
  }

  private segmentNoOf(segmentId: number): number {
    const segment = this.segmentNo.slotOf(segmentId);
    if (segment === this.segments) {
      if (segment === this.segmentIds.length) this.growSegments();
      this.segments++;
      this.segmentIds[segment] = segmentId;
      // A segment the network does not know is counted without speeds, as before.
      this.lengthsM[segment] = this.network.segmentById(segmentId)?.lengthM ?? NaN;
      this.countedBy[2 * segment] = this.countedBy[2 * segment + 1] = 0;
      this.lastMonthNo[segment] = -1;
      this.lastGroup[segment] = -1;
    }
    return segment;
  }

  /** The segment-month's group number; a segment's passes in a batch mostly fall in one month. */
  private groupOf(segment: number, local: LocalHour): number {
    if (this.lastMonthNo[segment] === local.monthNo) return this.lastGroup[segment];
    const group = this.groupNo.slotOf(segment * MONTH_NOS + local.monthNo);
    if (group === this.groups) {
      if (group === this.groupSegment.length) this.groupSegment = grown(this.groupSegment);
      this.groups++;
      this.groupSegment[group] = this.segmentIds[segment];
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

  private growSegments(): void {
    this.segmentIds = grown(this.segmentIds);
    this.lengthsM = grown(this.lengthsM);
    this.countedBy = grown(this.countedBy);
    this.lastMonthNo = grown(this.lastMonthNo);
    this.lastGroup = grown(this.lastGroup);
  }

  private growPasses(): void {
    this.passGroup = grown(this.passGroup);
    this.passCell = grown(this.passCell);
    this.passKph = grown(this.passKph);
    this.passTrip = grown(this.passTrip);
  }

  /** The tallies gathered so far, as columns; the accumulator starts empty again. */
  drainBatch(): SegmentCellBatch {
    const cells = new CellSums(this.passes, this.groups).of(
      this.passesByGroup(),
      this.tripPurpose,
      this.tripIncome,
    );
    const batch = { segmentIds: this.groupSegment.slice(0, this.groups), months: this.groupMonth, ...cells };
    this.reset();
    return batch;
  }

  /** The passes ordered by group, each group's in trip order (a stable counting sort, linear). */
  private passesByGroup(): PassesByGroup {
    const n = this.passes;
    const groups = this.groups;
    const groupStart = new Uint32Array(groups + 1);
    for (let i = 0; i < n; i++) groupStart[this.passGroup[i] + 1]++;
    for (let g = 0; g < groups; g++) groupStart[g + 1] += groupStart[g];
    const next = groupStart.slice(0, groups);
    const sorted = {
      groupStart,
      cell: new Uint16Array(n),
      kph: new Float64Array(n),
      trip: new Uint32Array(n),
    };
    for (let i = 0; i < n; i++) {
      const at = next[this.passGroup[i]]++;
      sorted.cell[at] = this.passCell[i];
      sorted.kph[at] = this.passKph[i];
      sorted.trip[at] = this.passTrip[i];
    }
    return sorted;
  }

  private reset(): void {
    this.segmentNo.clear();
    this.groupNo.clear();
    this.segments = 0;
    this.months.clear();
    this.hours.clear();
    this.lastHour = NaN;
    this.groups = 0;
    this.groupMonth = [];
    this.tripSerial = 0;
    this.passes = 0;
  }

  /** The cells gathered so far as objects (tests, and stores without a packed path); starts empty again. */
  drain(): SegmentStatCell[] {
    return cellsOfBatch(this.drainBatch());
  }
}

/** A speed worth tallying, in whole steps (tallySpeedKph); NaN when the pass tells nothing reliable. */
function speedKphOf(lengthM: number, seconds: number): number {
  return Number.isNaN(lengthM) || seconds < MIN_SPEED_SAMPLE_S ? NaN : tallySpeedKph(lengthM, seconds);
}

/** A batch's passes in group order: group g's are groupStart[g] … groupStart[g + 1]. */
interface PassesByGroup {
  groupStart: Uint32Array;
  cell: Uint16Array;
  kph: Float64Array;
  trip: Uint32Array;
}

/**
 * A batch's passes summed into cells, a segment-month at a time: within one, a cell's entry is found in a
 * table indexed by cell number (TALLY_CELLS long, stamped with the group it holds an entry of), so cells
 * come in the order first passed, each pass's speed added in trip order.
 */
class CellSums {
  private entries = 0;
  private readonly cell: Uint16Array;
  private readonly trips: Uint32Array;
  private readonly speedCount: Uint32Array;
  private readonly speedSum: Float64Array;
  private readonly entryOfCell = new Int32Array(TALLY_CELLS);
  private readonly stampOfCell = new Int32Array(TALLY_CELLS).fill(-1);
  /**
   * The group's detail counts as (entry - its first entry) × 256 + counter, once per count, summed when the
   * group is done (appending costs less than a map); the counting sort then stays within the group's cells.
   */
  private details = new Uint32Array(1024);
  private detailCount = 0;
  private raw = new Uint8Array(1024);
  private readonly rawStart = new Uint32Array(TALLY_CELLS + 1);
  /** Detail counters of cell k: detailStart[k] … detailStart[k + 1] of counter and count (at most 3 a pass). */
  private readonly detailStart: Uint32Array;
  private readonly counter: Uint8Array;
  private readonly count: Uint32Array;
  private runs = 0;

  constructor(
    passes: number,
    private readonly groups: number,
  ) {
    this.cell = new Uint16Array(passes);
    this.trips = new Uint32Array(passes);
    this.speedCount = new Uint32Array(passes);
    this.speedSum = new Float64Array(passes);
    this.detailStart = new Uint32Array(passes + 1);
    this.counter = new Uint8Array(3 * passes);
    this.count = new Uint32Array(3 * passes);
  }

  /** The passes summed; `tripPurpose` and `tripIncome` are each trip's detail counters (-1: none). */
  of(
    passes: PassesByGroup,
    tripPurpose: Int16Array,
    tripIncome: Int16Array,
  ): Omit<SegmentCellBatch, "segmentIds" | "months"> {
    const cellStart = new Uint32Array(this.groups + 1);
    for (let g = 0; g < this.groups; g++) {
      const first = (cellStart[g] = this.entries);
      for (let i = passes.groupStart[g]; i < passes.groupStart[g + 1]; i++) {
        const entry = this.entryOf(g, passes.cell[i]);
        this.trips[entry]++;
        this.addSpeed(entry - first, entry, passes.kph[i]);
        const trip = passes.trip[i];
        if (tripPurpose[trip] >= 0) this.addDetail(entry - first, tripPurpose[trip]);
        if (tripIncome[trip] >= 0) this.addDetail(entry - first, tripIncome[trip]);
      }
      this.sumDetails(first);
    }
    const n = this.entries;
    cellStart[this.groups] = n;
    // Views, not copies: the sums are made for this batch alone (copies were ~5 MB per 4,000 trips more of
    // the external memory whose growth starts V8's full collections).
    return {
      cellStart,
      cell: this.cell.subarray(0, n),
      trips: this.trips.subarray(0, n),
      speedCount: this.speedCount.subarray(0, n),
      speedSumKph: this.speedSum.subarray(0, n),
      detailStart: this.detailStart.subarray(0, n + 1),
      counter: this.counter.subarray(0, this.runs),
      count: this.count.subarray(0, this.runs),
    };
  }

  /** The cell's entry in group `group`, a new one when the group has none yet. */
  private entryOf(group: number, cell: number): number {
    if (this.stampOfCell[cell] === group) return this.entryOfCell[cell];
    const entry = this.entries++;
    this.stampOfCell[cell] = group;
    this.entryOfCell[cell] = entry;
    this.cell[entry] = cell;
    return entry;
  }

  private addSpeed(local: number, entry: number, kph: number): void {
    if (Number.isNaN(kph)) return;
    this.speedSum[entry] += kph;
    this.speedCount[entry]++;
    this.addDetail(local, Math.min(SPEED_BINS - 1, Math.floor(kph / SPEED_BIN_KPH)));
  }

  private addDetail(local: number, counter: number): void {
    if (this.detailCount === this.details.length) this.details = grown(this.details);
    this.details[this.detailCount++] = local * 256 + counter;
  }

  /**
   * The group's detail counts summed, counters ascending per cell: bucketed by cell (a counting sort), then
   * each cell's few counters ordered and counted in runs. A native sort of all keys (~300,000 for 4,000
   * trips) made the drain ~1.3× as long, at the end of the batch while matching workers wait.
   */
  private sumDetails(first: number): void {
    const cells = this.entries - first;
    const n = this.detailCount;
    const keys = this.details;
    const start = this.rawStart.fill(0, 0, cells + 1);
    for (let i = 0; i < n; i++) start[(keys[i] >>> 8) + 1]++;
    for (let k = 0; k < cells; k++) start[k + 1] += start[k];
    if (this.raw.length < n) this.raw = new Uint8Array(2 * n);
    const raw = this.raw;
    for (let i = 0; i < n; i++) raw[start[keys[i] >>> 8]++] = keys[i] & 255;
    // `start` now holds each cell's end; its start is the previous cell's end.
    for (let k = 0; k < cells; k++) {
      this.runs = countRuns(raw, k === 0 ? 0 : start[k - 1], start[k], this.counter, this.count, this.runs);
      this.detailStart[first + k + 1] = this.runs;
    }
    this.detailCount = 0;
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
