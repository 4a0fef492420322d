import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { GpsPoint, TripPurpose, VehicleClass } from "../trips/types.js";
import type { GroundTruthTrip, SimulatedTrip } from "./index.js";

/** Header of the trace CSV the ingest reads. */
export const TRACE_CSV_HEADER =
  "device_id,timestamp,lat,lon,speed,heading,vehicle_class,trip_purpose,income_band";

/** What every row of one trip repeats after the position: class and the trip's ground-truth attributes. */
export interface TraceRowTrip {
  deviceId: string;
  vehicleClass: VehicleClass;
  purpose: TripPurpose;
  incomeBand: number;
}

/**
 * One CSV row: ISO-8601 UTC time with ms, 6-decimal degrees, speed m/s and heading ° empty when unknown,
 * then the trip's class, purpose and income band (repeated per row: the ingest reads fixes, not trips).
 */
export function traceCsvRow(trip: TraceRowTrip, p: GpsPoint): string {
  const speed = p.speed === undefined ? "" : p.speed.toFixed(2);
  const heading = p.heading === undefined ? "" : p.heading.toFixed(1);
  const position = `${isoUtc(p.t)},${p.lat.toFixed(6)},${p.lon.toFixed(6)},${speed},${heading}`;
  return `${trip.deviceId},${position},${trip.vehicleClass},${trip.purpose},${trip.incomeBand}`;
}

let cachedDay = NaN;
let cachedDayPrefix = "";

/** Same text as `new Date(t).toISOString()`, without a Date per row: the day part is cached. */
export function isoUtc(t: number): string {
  const ms = ((t % 86_400_000) + 86_400_000) % 86_400_000;
  const day = t - ms;
  if (day !== cachedDay) {
    cachedDay = day;
    cachedDayPrefix = new Date(day).toISOString().slice(0, 11);
  }
  const sec = Math.floor(ms / 1000);
  return `${cachedDayPrefix}${pad(Math.floor(sec / 3600), 2)}:${pad(Math.floor(sec / 60) % 60, 2)}:${pad(sec % 60, 2)}.${pad(ms % 1000, 3)}Z`;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/**
 * One ground-truth JSONL line. The route is written as parallel arrays, `route.segmentIds`,
 * `route.forward` and `route.enterT` (each step left when the next is entered), to keep lines short.
 */
export function groundTruthLine(t: GroundTruthTrip): string {
  return JSON.stringify({
    tripId: t.tripId,
    deviceId: t.deviceId,
    vehicleClass: t.vehicleClass,
    source: t.source,
    purpose: t.purpose,
    incomeBand: t.incomeBand,
    origin: t.origin.map(round7),
    destination: t.destination.map(round7),
    startT: t.startT,
    endT: t.endT,
    lengthM: t.lengthM,
    route: {
      segmentIds: t.route.map((s) => s.segmentId),
      forward: t.route.map((s) => s.forward),
      enterT: t.route.map((s) => s.enterT),
    },
  });
}

export function parseGroundTruthLine(line: string): GroundTruthTrip {
  const o = JSON.parse(line) as Omit<GroundTruthTrip, "route"> & {
    route: { segmentIds: number[]; forward: boolean[]; enterT: number[] };
  };
  const { enterT } = o.route;
  return {
    ...o,
    route: o.route.segmentIds.map((segmentId, k) => ({
      segmentId,
      forward: o.route.forward[k],
      enterT: enterT[k],
      exitT: enterT[k + 1] ?? o.endT,
    })),
  };
}

/** A month's trace file (`writeTraces`). */
export interface TraceFiles {
  month: string;
  traces: string;
  trips: number;
  points: number;
}

export interface MonthFiles extends TraceFiles {
  groundTruth: string;
}

export interface WriteSummary<Files extends TraceFiles = MonthFiles> {
  trips: number;
  points: number;
  devices: number;
  months: Files[];
}

/**
 * Writes `traces-YYYY-MM.csv` and `ground-truth-YYYY-MM.jsonl` per month of
 * trip start (UTC). Ground truth streams in generation order; trace rows are
 * held for the month and written sorted by device id, then time, so the
 * streaming ingest can split per device (memory grows with one month's points).
 */
export function writeSimulation(
  trips: Iterable<SimulatedTrip>,
  outDir: string,
  onMonth?: (files: MonthFiles) => void,
): WriteSummary {
  // Every month written with its ground truth has its path.
  return writeMonths(trips, outDir, true, onMonth as (files: WrittenFiles) => void) as WriteSummary;
}

/**
 * The trace files of writeSimulation, the same bytes, without the ground truth: the demo ingests the traces
 * and never reads the truth, whose JSON lines were an eighth of the demo simulation's CPU.
 */
export function writeTraces(
  trips: Iterable<SimulatedTrip>,
  outDir: string,
  onMonth?: (files: TraceFiles) => void,
): WriteSummary<TraceFiles> {
  return writeMonths(trips, outDir, false, onMonth);
}

type WrittenFiles = TraceFiles & { groundTruth?: string };

function writeMonths(
  trips: Iterable<SimulatedTrip>,
  outDir: string,
  groundTruth: boolean,
  onMonth?: (files: WrittenFiles) => void,
): WriteSummary<WrittenFiles> {
  mkdirSync(outDir, { recursive: true });
  const summary: WriteSummary<WrittenFiles> = { trips: 0, points: 0, devices: 0, months: [] };
  const devices = new Set<string>();
  let month = null as MonthWriter | null;
  for (const trip of trips) {
    const key = new Date(trip.truth.startT).toISOString().slice(0, 7);
    if (month?.files.month !== key) {
      if (month) finish(month, summary, onMonth);
      month = new MonthWriter(outDir, key, groundTruth);
    }
    month.add(trip);
    devices.add(trip.deviceId);
  }
  if (month) finish(month, summary, onMonth);
  summary.devices = devices.size;
  return summary;
}

function finish(
  month: MonthWriter,
  summary: WriteSummary<WrittenFiles>,
  onMonth?: (files: WrittenFiles) => void,
): void {
  month.close();
  summary.trips += month.files.trips;
  summary.points += month.files.points;
  summary.months.push(month.files);
  onMonth?.(month.files);
}

class MonthWriter {
  readonly files: WrittenFiles;
  private readonly rowsByDevice = new Map<string, string[]>();
  /** Null when the ground truth is not written (writeTraces). */
  private readonly truthFd: number | null;
  private truthBuffer: string[] = [];

  constructor(outDir: string, month: string, groundTruth: boolean) {
    this.files = { month, traces: join(outDir, `traces-${month}.csv`), trips: 0, points: 0 };
    this.truthFd = null;
    if (groundTruth) {
      this.files.groundTruth = join(outDir, `ground-truth-${month}.jsonl`);
      this.truthFd = openSync(this.files.groundTruth, "w");
    }
  }

  add(trip: SimulatedTrip): void {
    if (trip.points.length === 0) return;
    let rows = this.rowsByDevice.get(trip.deviceId);
    if (!rows) this.rowsByDevice.set(trip.deviceId, (rows = []));
    // One block of rows per trip keeps the month's buffer to few, larger strings.
    rows.push(trip.points.map((p) => traceCsvRow(trip.truth, p)).join("\n"));
    if (this.truthFd !== null) {
      this.truthBuffer.push(groundTruthLine(trip.truth));
      if (this.truthBuffer.length >= 1000) this.flushTruth();
    }
    this.files.trips++;
    this.files.points += trip.points.length;
  }

  close(): void {
    if (this.truthFd !== null) {
      this.flushTruth();
      closeSync(this.truthFd);
    }
    const fd = openSync(this.files.traces, "w");
    try {
      writeSync(fd, TRACE_CSV_HEADER + "\n");
      // Trips of one device arrive in time order, so its rows already are.
      for (const id of [...this.rowsByDevice.keys()].sort()) writeRows(fd, this.rowsByDevice.get(id)!);
    } finally {
      closeSync(fd);
    }
  }

  private flushTruth(): void {
    if (this.truthBuffer.length > 0) writeSync(this.truthFd!, this.truthBuffer.join("\n") + "\n");
    this.truthBuffer = [];
  }
}

function writeRows(fd: number, blocks: string[]): void {
  for (let k = 0; k < blocks.length; k += 200) writeSync(fd, blocks.slice(k, k + 200).join("\n") + "\n");
}

function round7(x: number): number {
  return Math.round(x * 1e7) / 1e7;
}
