import type { SegmentStatCell } from "./segment-stats.js";
import { emptySegmentMonth, SPEED_BIN_KPH, SPEED_BINS } from "./segment-stats.js";
import type { Network } from "../network/network.js";
import type { LocalClock } from "../time.js";
import { isSegmentCounted } from "../trips/codes.js";
import type { MatchedTrip } from "../trips/types.js";

/** Traversals shorter than this tell nothing reliable about speed (interpolated times on tiny segments). */
const MIN_SPEED_SAMPLE_S = 1;

/**
 * Folds matched trips into per-segment cells (segment × month × day of week ×
 * hour × direction × vehicle class × source) in local time, so segment counts
 * are precomputed at ingest and metrics queries never scan trips.
 */
export class SegmentCellAccumulator {
  private readonly cells = new Map<string, SegmentStatCell>();

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
    const counted = new Set<string>();
    for (const step of trip.path) {
      const direction = step.forward ? "with" : "against";
      const pass = `${step.segmentId}|${direction}`;
      if (counted.has(pass)) continue;
      counted.add(pass);
      const local = this.clock.at(step.enterT);
      const key = `${step.segmentId}|${local.day.slice(0, 7)}|${local.weekday}|${local.hour}|${direction}|${trip.vehicleClass}|${trip.source}`;
      let cell = this.cells.get(key);
      if (!cell) {
        cell = {
          ...emptySegmentMonth(step.segmentId, local.day.slice(0, 7)),
          dayOfWeek: local.weekday,
          hour: local.hour,
          direction,
          vehicleClass: trip.vehicleClass,
          source: trip.source,
        };
        this.cells.set(key, cell);
      }
      cell.trips++;
      this.addSpeed(cell, step.segmentId, (step.exitT - step.enterT) / 1000);
      if (trip.purpose) cell.purposes[trip.purpose] = (cell.purposes[trip.purpose] ?? 0) + 1;
      // Band 0 is a real band (the generator's lowest); only a missing or negative band is unknown.
      const band = trip.incomeBand;
      if (band !== undefined && band >= 0) cell.incomes[band] = (cell.incomes[band] ?? 0) + 1;
    }
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
    const out = [...this.cells.values()];
    this.cells.clear();
    return out;
  }
}
