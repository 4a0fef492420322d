import type { SegmentStatCell } from "./segment-stats.js";
import { SPEED_BIN_KPH, SPEED_BINS } from "./segment-stats.js";
import type { Network } from "../network/network.js";
import type { LocalClock } from "../time.js";
import { isSegmentCounted } from "../trips/codes.js";
import { TRACE_SOURCES, VEHICLE_CLASSES, type MatchedTrip } from "../trips/types.js";

/** Traversals shorter than this tell nothing reliable about speed (interpolated times on tiny segments). */
const MIN_SPEED_SAMPLE_S = 1;

/** The local hour a UTC hour falls in, with a small number for it (month, weekday and hour together). */
interface LocalHour {
  month: string;
  weekday: number;
  hour: number;
  slot: number;
}

const HOUR_MS = 3_600_000;
const HOURS_PER_WEEK = 168;

/**
 * Folds matched trips into per-segment cells (segment × month × day of week ×
 * hour × direction × vehicle class × source) in local time, so segment counts
 * are precomputed at ingest and metrics queries never scan trips. Cells are
 * found by numbers, not by string keys: building and hashing a key string per
 * path step cost more than matching the trip.
 */
export class SegmentCellAccumulator {
  /** Cells in the order first touched (the store sums them in this order). */
  private cells: SegmentStatCell[] = [];
  /** Segment id → (local hour slot, direction, class, source as one number) → cell. */
  private readonly bySegment = new Map<number, Map<number, SegmentStatCell>>();
  /** Local hours by UTC hour, as LocalClock caches them; months numbered as first seen. */
  private readonly hours = new Map<number, LocalHour>();
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
    const counted = new Set<number>();
    for (const step of trip.path) {
      const pass = 2 * step.segmentId + (step.forward ? 0 : 1);
      if (counted.has(pass)) continue;
      counted.add(pass);
      const local = this.localHour(step.enterT);
      const detail =
        (2 * local.slot + (step.forward ? 0 : 1)) * VEHICLE_CLASSES.length * TRACE_SOURCES.length +
        classAndSource;
      const cell = this.cellOf(step.segmentId, detail, local, step.forward, trip);
      cell.trips++;
      this.addSpeed(cell, step.segmentId, (step.exitT - step.enterT) / 1000);
      if (trip.purpose) cell.purposes[trip.purpose] = (cell.purposes[trip.purpose] ?? 0) + 1;
      // Band 0 is a real band (the generator's lowest); only a missing or negative band is unknown.
      const band = trip.incomeBand;
      if (band !== undefined && band >= 0) cell.incomes[band] = (cell.incomes[band] ?? 0) + 1;
    }
  }

  private cellOf(
    segmentId: number,
    detail: number,
    local: LocalHour,
    forward: boolean,
    trip: MatchedTrip,
  ): SegmentStatCell {
    let ofSegment = this.bySegment.get(segmentId);
    if (!ofSegment) this.bySegment.set(segmentId, (ofSegment = new Map()));
    let cell = ofSegment.get(detail);
    if (!cell) {
      // A literal in emptySegmentMonth's field order (a spread made slow dictionary-mode objects).
      cell = {
        segmentId,
        month: local.month,
        trips: 0,
        speedSumKph: 0,
        speedCount: 0,
        speedHistogram: [],
        purposes: {},
        incomes: {},
        dayOfWeek: local.weekday,
        hour: local.hour,
        direction: forward ? "with" : "against",
        vehicleClass: trip.vehicleClass,
        source: trip.source,
      };
      ofSegment.set(detail, cell);
      this.cells.push(cell);
    }
    return cell;
  }

  private localHour(t: number): LocalHour {
    const key = Math.floor(t / HOUR_MS);
    let local = this.hours.get(key);
    if (!local) {
      const { day, weekday, hour } = this.clock.at(t);
      const month = day.slice(0, 7);
      let monthNo = this.months.get(month);
      if (monthNo === undefined) this.months.set(month, (monthNo = this.months.size));
      local = { month, weekday, hour, slot: monthNo * HOURS_PER_WEEK + (weekday - 1) * 24 + hour };
      if (this.hours.size > 100_000) this.hours.clear();
      this.hours.set(key, local);
    }
    return local;
  }

  private addSpeed(cell: SegmentStatCell, segmentId: number, seconds: number): void {
    const segment = this.network.segmentById(segmentId);
    if (!segment || seconds < MIN_SPEED_SAMPLE_S) return;
    const kph = segment.lengthM / 1000 / (seconds / 3600);
    cell.speedSumKph += kph;
    cell.speedCount++;
    const bin = Math.min(SPEED_BINS - 1, Math.floor(kph / SPEED_BIN_KPH));
    while (cell.speedHistogram.length <= bin) cell.speedHistogram.push(0);
    cell.speedHistogram[bin]++;
  }

  /** The cells gathered so far; the accumulator starts empty again. */
  drain(): SegmentStatCell[] {
    const out = this.cells;
    this.cells = [];
    this.bySegment.clear();
    return out;
  }
}
