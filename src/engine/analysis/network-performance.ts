import { nearestRank } from "./od-distributions.js";
import type { SegmentPassage } from "./segment-analysis.js";

/** Local hours whose speeds define a segment's free-flow speed: 22:00 to 05:59. */
export const NIGHT_HOURS: readonly number[] = [22, 23, 0, 1, 2, 3, 4, 5];
/** The percentile of night-time speeds taken as free-flow speed. */
export const FREE_FLOW_PERCENTILE = 85;

interface Cell {
  weight: number;
  speeds: number[];
  /** Expansion-weighted sums: speed (m/s), seconds on the segment, metres travelled. */
  speedSum: number;
  secondsSum: number;
  metresSum: number;
  /** Kept to compute delay once free-flow speed is known: per passage [weight, seconds, metres]. */
  passages: number[];
}

export interface PerformanceRow {
  group: number;
  segment: number;
  dayType: number;
  /** Hour 0..23, or quarter hour 0..95 when periods are 15 minutes. */
  period: number;
  sample: number;
  /** Expansion-weighted mean speed, m/s. */
  avgSpeedMs: number;
  /** Nearest-rank percentiles of the sampled speeds, m/s. */
  percentilesMs: number[];
  /** 85th percentile of the segment's night-time speeds (every day type), m/s; null without night trips. */
  freeFlowMs: number | null;
  /** Expansion-weighted mean time on the segment, seconds. */
  avgTravelTimeS: number;
  /** Mean travel time over the free-flow travel time of the mean distance travelled; null without free flow. */
  travelTimeIndex: number | null;
  /** Summed weight × seconds above the free-flow time of each passage, in hours (caller averages per day). */
  delayHours: number | null;
  /** Summed expansion weight (caller averages per day). */
  weight: number;
}

/**
 * Network performance: per analysed segment, device group, day type and period (hour or quarter hour of
 * entering), the speeds of the trips over it; free-flow speed from its night-time speeds.
 */
export class NetworkPerformanceTally {
  private readonly cells = new Map<string, Cell>();
  private readonly night = new Map<number, number[]>();

  add(
    passage: SegmentPassage,
    trip: { weight: number; groups: readonly number[] },
    slice: { dayTypes: readonly number[]; period: number; hour: number },
  ): void {
    if (passage.ms <= 0 || passage.lengthM <= 0) return; // no measurable speed
    const seconds = passage.ms / 1000;
    const speed = passage.lengthM / seconds;
    if (NIGHT_HOURS.includes(slice.hour)) {
      const speeds = this.night.get(passage.segment) ?? [];
      speeds.push(speed);
      this.night.set(passage.segment, speeds);
    }
    for (const group of trip.groups)
      for (const dayType of slice.dayTypes) {
        const key = `${group}|${passage.segment}|${dayType}|${slice.period}`;
        let cell = this.cells.get(key);
        if (!cell) {
          cell = { weight: 0, speeds: [], speedSum: 0, secondsSum: 0, metresSum: 0, passages: [] };
          this.cells.set(key, cell);
        }
        cell.weight += trip.weight;
        cell.speeds.push(speed);
        cell.speedSum += speed * trip.weight;
        cell.secondsSum += seconds * trip.weight;
        cell.metresSum += passage.lengthM * trip.weight;
        cell.passages.push(trip.weight, seconds, passage.lengthM);
      }
  }

  /** The segment's free-flow speed, m/s; null when no trip travelled it at night. */
  freeFlow(segment: number): number | null {
    const speeds = this.night.get(segment);
    return speeds?.length
      ? nearestRank(
          [...speeds].sort((a, b) => a - b),
          FREE_FLOW_PERCENTILE,
        )
      : null;
  }

  /** Rows ordered day type → group → segment → period. */
  rows(percentiles: readonly number[]): PerformanceRow[] {
    const rows: PerformanceRow[] = [];
    for (const [key, cell] of this.cells) {
      const [group, segment, dayType, period] = key.split("|").map(Number);
      const freeFlowMs = this.freeFlow(segment);
      const sorted = [...cell.speeds].sort((a, b) => a - b);
      const avgTravelTimeS = cell.secondsSum / cell.weight;
      let delayHours: number | null = null;
      if (freeFlowMs !== null) {
        delayHours = 0;
        for (let i = 0; i < cell.passages.length; i += 3) {
          const [weight, seconds, metres] = cell.passages.slice(i, i + 3);
          delayHours += (weight * Math.max(0, seconds - metres / freeFlowMs)) / 3600;
        }
      }
      rows.push({
        group,
        segment,
        dayType,
        period,
        sample: cell.speeds.length,
        avgSpeedMs: cell.speedSum / cell.weight,
        percentilesMs: percentiles.map((p) => nearestRank(sorted, p)),
        freeFlowMs,
        avgTravelTimeS,
        travelTimeIndex:
          freeFlowMs === null ? null : avgTravelTimeS / (cell.metresSum / cell.weight / freeFlowMs),
        delayHours,
        weight: cell.weight,
      });
    }
    return rows.sort(
      (a, b) => a.dayType - b.dayType || a.group - b.group || a.segment - b.segment || a.period - b.period,
    );
  }
}
