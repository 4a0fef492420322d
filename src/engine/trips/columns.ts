import {
  TRACE_SOURCE_CODES,
  TRACE_SOURCE_OF_CODE,
  TRIP_PURPOSE_CODES,
  TRIP_PURPOSE_OF_CODE,
  VEHICLE_CLASS_CODES,
  VEHICLE_CLASS_OF_CODE,
} from "./codes.js";
import {
  type MatchedTrip,
  type PathStep,
  type TraceSource,
  type TripPurpose,
  type VehicleClass,
} from "./types.js";
import { ColumnarPathTrip, stepCountOf, TripFields } from "./path-columns.js";

/** Code of an absent purpose in `purpose`; absent income band is -1 in `incomeBand`. */
export const NO_PURPOSE = 255;
export const NO_INCOME_BAND = -1;

/**
 * A chunk of trips as parallel typed arrays: what the trip store keeps and what
 * analyses scan without building an object per trip. Trip i's path steps are
 * `pathStart[i] .. pathStart[i + 1]` in the `path*` arrays.
 */
export interface TripColumns {
  count: number;
  /** Epoch ms. */
  startT: Float64Array;
  endT: Float64Array;
  originLon: Float64Array;
  originLat: Float64Array;
  destLon: Float64Array;
  destLat: Float64Array;
  lengthM: Float32Array;
  /** VEHICLE_CLASS_CODES (codes.ts). */
  vehicleClass: Uint8Array;
  /** TRACE_SOURCE_CODES. */
  source: Uint8Array;
  /** TRIP_PURPOSE_CODES, or NO_PURPOSE. */
  purpose: Uint8Array;
  /** Income band, or NO_INCOME_BAND. */
  incomeBand: Int8Array;
  /** Index into `devices`. */
  deviceIndex: Uint32Array;
  devices: string[];
  /** count + 1 offsets into the path arrays. */
  pathStart: Uint32Array;
  pathSegmentId: Float64Array;
  /** 1 when travelled along the segment's geometry. */
  pathForward: Uint8Array;
  /** Enter and exit times as whole milliseconds after the trip's startT. */
  pathEnterMs: Int32Array;
  pathExitMs: Int32Array;
}

/** The typed-array columns in their fixed storage order, with their element types. */
export const COLUMN_LAYOUT = [
  ["startT", Float64Array],
  ["endT", Float64Array],
  ["originLon", Float64Array],
  ["originLat", Float64Array],
  ["destLon", Float64Array],
  ["destLat", Float64Array],
  ["lengthM", Float32Array],
  ["vehicleClass", Uint8Array],
  ["source", Uint8Array],
  ["purpose", Uint8Array],
  ["incomeBand", Int8Array],
  ["deviceIndex", Uint32Array],
  ["pathStart", Uint32Array],
  ["pathSegmentId", Float64Array],
  ["pathForward", Uint8Array],
  ["pathEnterMs", Int32Array],
  ["pathExitMs", Int32Array],
] as const;

export type ColumnName = (typeof COLUMN_LAYOUT)[number][0];

export const vehicleClassCode = (c: VehicleClass) => VEHICLE_CLASS_CODES[c];
export const sourceCode = (s: TraceSource) => TRACE_SOURCE_CODES[s];

/** Packs trips into columns. Path times are rounded to whole milliseconds. */
export function tripsToColumns(trips: readonly MatchedTrip[]): TripColumns {
  const builder = new TripColumnsBuilder(
    trips.length,
    trips.reduce((sum, t) => sum + stepCountOf(t), 0),
  );
  for (const trip of trips) builder.add(trip);
  return builder.columns();
}

/**
 * Trips packed into columns one at a time, as they come (an ingest batch fills while trips are matched);
 * the columns grow as needed. `columns()` is what `tripsToColumns` gives for the same trips.
 */
export class TripColumnsBuilder {
  private cols: TripColumns;
  private readonly deviceIndex = new Map<string, number>();
  private steps = 0;

  constructor(trips = 64, steps = 64 * 32) {
    this.cols = allocate(trips, steps);
    this.cols.count = 0;
  }

  get count(): number {
    return this.cols.count;
  }

  add(trip: MatchedTrip): void {
    const i = this.cols.count;
    const stepCount = stepCountOf(trip);
    if (i + 1 >= this.cols.pathStart.length || this.steps + stepCount > this.cols.pathSegmentId.length)
      this.grow(stepCount);
    const cols = this.cols;
    cols.startT[i] = trip.startT;
    cols.endT[i] = trip.endT;
    [cols.originLon[i], cols.originLat[i]] = trip.origin;
    [cols.destLon[i], cols.destLat[i]] = trip.destination;
    cols.lengthM[i] = trip.lengthM;
    cols.vehicleClass[i] = vehicleClassCode(trip.vehicleClass);
    cols.source[i] = sourceCode(trip.source);
    cols.purpose[i] = trip.purpose === undefined ? NO_PURPOSE : TRIP_PURPOSE_CODES[trip.purpose];
    cols.incomeBand[i] = trip.incomeBand ?? NO_INCOME_BAND;
    cols.deviceIndex[i] = indexOfDevice(this.deviceIndex, cols.devices, trip.deviceId);
    cols.pathStart[i] = this.steps;
    // Two loops, not one visitor of both kinds of path: called through a visitor shared with the tallies, the
    // steps read from columns cost what the step objects did (docs/performance.md, "Stop 55").
    const steps = ColumnarPathTrip.stepsOf(trip);
    if (steps)
      for (let j = steps.from; j < steps.to; j++)
        this.addStep(
          trip.startT,
          steps.segmentId[j],
          steps.forward[j] === 1,
          steps.enterT[j],
          steps.exitT[j],
        );
    else
      for (const step of trip.path)
        this.addStep(trip.startT, step.segmentId, step.forward, step.enterT, step.exitT);
    cols.count = i + 1;
    cols.pathStart[i + 1] = this.steps;
  }

  /** A path step of the trip being added, which started at `startT`. */
  private addStep(startT: number, segmentId: number, forward: boolean, enterT: number, exitT: number): void {
    const cols = this.cols;
    const k = this.steps++;
    cols.pathSegmentId[k] = segmentId;
    cols.pathForward[k] = forward ? 1 : 0;
    cols.pathEnterMs[k] = Math.round(enterT - startT);
    cols.pathExitMs[k] = Math.round(exitT - startT);
  }

  /** The trip added as number `row`, its path decoded from the columns whenever it is read. */
  tripAt(row: number): MatchedTrip {
    return new ColumnsTrip(this, this.cols, row);
  }

  /** The path of the trip added as number `row`. */
  pathAt(row: number): PathStep[] {
    return pathAt(this.cols, row);
  }

  /** The trips added so far, each column exactly as long as they need (views on the builder's arrays). */
  columns(): TripColumns {
    const n = this.cols.count;
    return columnsOf(
      n,
      this.cols.devices,
      COLUMN_LAYOUT.map(([name]) => this.cols[name].subarray(0, lengthOf(name, n, this.steps))),
    );
  }

  private grow(moreSteps: number): void {
    const n = this.cols.count;
    const trips = Math.max(2 * (n + 1), 64);
    const steps = Math.max(2 * this.cols.pathSegmentId.length, this.steps + moreSteps);
    const grown = allocate(trips, steps);
    for (const [name] of COLUMN_LAYOUT)
      (grown[name] as Uint8Array).set(
        this.cols[name].subarray(0, lengthOf(name, n, this.steps)) as Uint8Array,
      );
    grown.count = n;
    grown.devices = this.cols.devices;
    this.cols = grown;
  }
}

function indexOfDevice(index: Map<string, number>, devices: string[], id: string): number {
  let i = index.get(id);
  if (i === undefined) {
    i = devices.push(id) - 1;
    index.set(id, i);
  }
  return i;
}

function allocate(n: number, steps: number): TripColumns {
  return columnsOf(
    n,
    [],
    COLUMN_LAYOUT.map(([name, Type]) => new Type(lengthOf(name, n, steps))),
  );
}

/**
 * A chunk's columns as one object, from its arrays in COLUMN_LAYOUT order. Every TripColumns is made by
 * this one literal, so all have one shape: set name by name in a loop, the object went into V8's dictionary
 * mode, and each read of a column (per trip or path step, in the ingest and every scan) was a hash lookup.
 */
export function columnsOf(count: number, devices: string[], arrays: readonly ArrayBufferView[]): TripColumns {
  if (arrays.length !== COLUMN_LAYOUT.length)
    throw new RangeError(`${arrays.length} trip columns, not ${COLUMN_LAYOUT.length}`);
  const [
    startT,
    endT,
    originLon,
    originLat,
    destLon,
    destLat,
    lengthM,
    vehicleClass,
    source,
    purpose,
    incomeBand,
    deviceIndex,
    pathStart,
    pathSegmentId,
    pathForward,
    pathEnterMs,
    pathExitMs,
  ] = arrays;
  return {
    count,
    devices,
    startT: startT as Float64Array,
    endT: endT as Float64Array,
    originLon: originLon as Float64Array,
    originLat: originLat as Float64Array,
    destLon: destLon as Float64Array,
    destLat: destLat as Float64Array,
    lengthM: lengthM as Float32Array,
    vehicleClass: vehicleClass as Uint8Array,
    source: source as Uint8Array,
    purpose: purpose as Uint8Array,
    incomeBand: incomeBand as Int8Array,
    deviceIndex: deviceIndex as Uint32Array,
    pathStart: pathStart as Uint32Array,
    pathSegmentId: pathSegmentId as Float64Array,
    pathForward: pathForward as Uint8Array,
    pathEnterMs: pathEnterMs as Int32Array,
    pathExitMs: pathExitMs as Int32Array,
  };
}

/** Elements of a column for n trips with `steps` path steps in all. */
export function lengthOf(name: ColumnName, n: number, steps: number): number {
  if (name === "pathStart") return n + 1;
  return name.startsWith("path") ? steps : n;
}

/** Trip i of a chunk as an object (tests, exports; analyses read the columns). */
export function tripAt(cols: TripColumns, i: number): MatchedTrip {
  const { purpose, incomeBand, ...fields } = tripFieldsAt(cols, i);
  const trip: MatchedTrip = { ...fields, path: pathAt(cols, i) };
  if (purpose !== undefined) trip.purpose = purpose;
  if (incomeBand !== undefined) trip.incomeBand = incomeBand;
  return trip;
}

/** Trip i's fields but its path; purpose and income band only when known. */
function tripFieldsAt(cols: TripColumns, i: number): Omit<MatchedTrip, "path"> {
  const fields: Omit<MatchedTrip, "path"> = {
    deviceId: cols.devices[cols.deviceIndex[i]],
    vehicleClass: VEHICLE_CLASS_OF_CODE[cols.vehicleClass[i]],
    source: TRACE_SOURCE_OF_CODE[cols.source[i]],
    origin: [cols.originLon[i], cols.originLat[i]],
    destination: [cols.destLon[i], cols.destLat[i]],
    startT: cols.startT[i],
    endT: cols.endT[i],
    lengthM: cols.lengthM[i],
  };
  if (cols.purpose[i] !== NO_PURPOSE) fields.purpose = TRIP_PURPOSE_OF_CODE[cols.purpose[i]] as TripPurpose;
  if (cols.incomeBand[i] !== NO_INCOME_BAND) fields.incomeBand = cols.incomeBand[i];
  return fields;
}

/**
 * A trip of a TripColumnsBuilder read back: its fields as stored, its path (a getter of the class, so every
 * such trip shares one shape) decoded whenever it is read.
 */
class ColumnsTrip extends TripFields implements MatchedTrip {
  readonly #builder: TripColumnsBuilder;
  readonly #row: number;

  constructor(builder: TripColumnsBuilder, cols: TripColumns, row: number) {
    super(tripFieldsAt(cols, row));
    this.#builder = builder;
    this.#row = row;
  }

  get path(): PathStep[] {
    return this.#builder.pathAt(this.#row);
  }
}

function pathAt(cols: TripColumns, i: number): PathStep[] {
  const startT = cols.startT[i];
  const path: PathStep[] = [];
  for (let k = cols.pathStart[i]; k < cols.pathStart[i + 1]; k++)
    path.push({
      segmentId: cols.pathSegmentId[k],
      forward: cols.pathForward[k] === 1,
      enterT: startT + cols.pathEnterMs[k],
      exitT: startT + cols.pathExitMs[k],
    });
  return path;
}

export function columnsToTrips(cols: TripColumns): MatchedTrip[] {
  return Array.from({ length: cols.count }, (_, i) => tripAt(cols, i));
}

/** The trips of a chunk for which `keep(i)` holds, as a new chunk (columns copied, device list shared). */
export function selectTrips(cols: TripColumns, keep: (i: number) => boolean): TripColumns {
  // Runs of consecutive kept trips, copied a column at a time: an element at a time through every column
  // by name took ~3.6 µs a trip, a scan's cost whenever a filter splits a chunk's classes.
  const runs: number[] = [];
  let [trips, steps] = [0, 0];
  for (let i = 0; i < cols.count; i++) {
    if (!keep(i)) continue;
    if (runs.length > 0 && runs[runs.length - 1] === i) runs[runs.length - 1] = i + 1;
    else runs.push(i, i + 1);
    trips++;
    steps += cols.pathStart[i + 1] - cols.pathStart[i];
  }
  const out = allocate(trips, steps);
  out.devices = cols.devices;
  for (const [name] of COLUMN_LAYOUT)
    if (name !== "pathStart")
      copyRuns(out[name], cols[name], runs, name.startsWith("path") ? cols.pathStart : null);
  let [t, k] = [0, 0];
  for (let r = 0; r < runs.length; r += 2) {
    const [from, to] = [runs[r], runs[r + 1]];
    for (let i = from; i < to; i++) out.pathStart[t++] = k + cols.pathStart[i] - cols.pathStart[from];
    k += cols.pathStart[to] - cols.pathStart[from];
  }
  out.pathStart[trips] = k;
  return out;
}

/**
 * Copies the runs (from, to pairs of trip numbers) of one column into `into`, one after the other; with
 * `pathStart`, of a path column (the runs' steps). Bytes through one view type, so one loop serves every
 * column's element type; long runs in one native copy.
 */
function copyRuns(
  into: ArrayBufferView,
  from: ArrayBufferView,
  runs: readonly number[],
  pathStart: Uint32Array | null,
): void {
  const bytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const [target, source] = [bytes(into), bytes(from)];
  const size = (from as Uint8Array).BYTES_PER_ELEMENT;
  let at = 0;
  for (let r = 0; r < runs.length; r += 2) {
    const first = size * (pathStart ? pathStart[runs[r]] : runs[r]);
    const end = size * (pathStart ? pathStart[runs[r + 1]] : runs[r + 1]);
    if (end - first > 64) target.set(source.subarray(first, end), at);
    else for (let b = first; b < end; b++) target[at + b - first] = source[b];
    at += end - first;
  }
}

/**
 * Several chunks as one, trips in the order given: the columns `tripsToColumns` gives for all their trips,
 * copied column by column (compaction merged chunks through an object per trip and path step). Each part's
 * paths start at its step 0, as every chunk's do.
 */
export function concatColumns(parts: readonly TripColumns[]): TripColumns {
  const trips = parts.reduce((n, c) => n + c.count, 0);
  const steps = parts.reduce((n, c) => n + c.pathStart[c.count], 0);
  const out = allocate(trips, steps);
  const index = new Map<string, number>();
  const target = out as unknown as Record<ColumnName, { set(from: ArrayLike<number>, at: number): void }>;
  let [tripAt, stepAt] = [0, 0];
  for (const cols of parts) {
    const stepCount = cols.pathStart[cols.count];
    for (const [name] of COLUMN_LAYOUT)
      if (name !== "pathStart" && name !== "deviceIndex")
        target[name].set(
          cols[name].subarray(0, lengthOf(name, cols.count, stepCount)),
          name.startsWith("path") ? stepAt : tripAt,
        );
    // Devices numbered as the trips first name them, as one chunk of all the trips numbers them.
    const deviceOf = new Int32Array(cols.devices.length).fill(-1);
    for (let i = 0; i < cols.count; i++) {
      const own = cols.deviceIndex[i];
      if (deviceOf[own] < 0) deviceOf[own] = indexOfDevice(index, out.devices, cols.devices[own]);
      out.deviceIndex[tripAt + i] = deviceOf[own];
      out.pathStart[tripAt + i] = stepAt + cols.pathStart[i];
    }
    tripAt += cols.count;
    stepAt += stepCount;
  }
  out.pathStart[trips] = stepAt;
  return out;
}

/** Trips from … to-1 of a chunk as a chunk of their own: the columns `tripsToColumns` gives for those trips. */
export function tripRange(cols: TripColumns, from: number, to: number): TripColumns {
  // The selection keeps the whole device list; joined, it lists only the devices its trips name.
  return concatColumns([selectTrips(cols, (i) => i >= from && i < to)]);
}
