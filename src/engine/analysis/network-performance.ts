import { nearestRank } from "./od-distributions.js";
import { grown } from "../typed-arrays.js";
import type { SegmentPassage } from "./segment-analysis.js";

/** Local hours whose speeds define a segment's free-flow speed: 22:00 to 05:59. */
export const NIGHT_HOURS: readonly number[] = [22, 23, 0, 1, 2, 3, 4, 5];
/** The percentile of night-time speeds taken as free-flow speed. */
export const FREE_FLOW_PERCENTILE = 85;

/**
 * The passages of one (segment, period), once each whatever the trip's groups and day types (bit masks):
 * growable typed columns, so a million trips over a thousand roads stay within memory — per passage 8 bytes
 * each of weight, seconds and metres, 4 each of the masks.
 */
class Passages {
  length = 0;
  weight = new Float64Array(16);
  seconds = new Float64Array(16);
  metres = new Float64Array(16);
  groups = new Uint32Array(16);
  dayTypes = new Uint32Array(16);

  push(weight: number, seconds: number, metres: number, groups: number, dayTypes: number): void {
    if (this.length === this.weight.length) this.grow();
    const i = this.length++;
    this.weight[i] = weight;
    this.seconds[i] = seconds;
    this.metres[i] = metres;
    this.groups[i] = groups;
    this.dayTypes[i] = dayTypes;
  }

  private grow(): void {
    this.weight = grown(this.weight);
    this.seconds = grown(this.seconds);
    this.metres = grown(this.metres);
    this.groups = grown(this.groups);
    this.dayTypes = grown(this.dayTypes);
  }
}

/** Bit mask of small indexes (groups, day types: at most 32 of each). */
function maskOf(indexes: readonly number[]): number {
  let mask = 0;
  for (const i of indexes) {
    if (i >= 32)
      throw new Error(`network performance supports at most 32 groups and day types, got index ${i}`);
    mask |= 1 << i;
  }
  return mask >>> 0;
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
  /** "segment|period" → its passages. */
  private readonly cells = new Map<string, Passages>();
  private readonly night = new Map<number, number[]>();

  add(
    passage: SegmentPassage,
    trip: { weight: number; groups: readonly number[] },
    slice: { dayTypes: readonly number[]; period: number; hour: number },
  ): void {
    if (passage.ms <= 0 || passage.lengthM <= 0) return; // no measurable speed
    if (trip.groups.length === 0 || slice.dayTypes.length === 0) return;
    const seconds = passage.ms / 1000;
    if (NIGHT_HOURS.includes(slice.hour)) {
      const speeds = this.night.get(passage.segment) ?? [];
      speeds.push(passage.lengthM / seconds);
      this.night.set(passage.segment, speeds);
    }
    const key = `${passage.segment}|${slice.period}`;
    let cell = this.cells.get(key);
    if (!cell) {
      cell = new Passages();
      this.cells.set(key, cell);
    }
    cell.push(trip.weight, seconds, passage.lengthM, maskOf(trip.groups), maskOf(slice.dayTypes));
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
      const [segment, period] = key.split("|").map(Number);
      const freeFlowMs = this.freeFlow(segment);
      let groups = 0;
      let dayTypes = 0;
      for (let i = 0; i < cell.length; i++) {
        groups |= cell.groups[i];
        dayTypes |= cell.dayTypes[i];
      }
      for (let group = 0; group < 32; group++) {
        if (!(groups & (1 << group))) continue;
        for (let dayType = 0; dayType < 32; dayType++)
          if (dayTypes & (1 << dayType)) {
            const row = rowOf(cell, 1 << group, 1 << dayType, freeFlowMs, percentiles);
            if (row) rows.push({ ...row, group, segment, dayType, period });
          }
      }
    }
    return rows.sort(
      (a, b) => a.dayType - b.dayType || a.group - b.group || a.segment - b.segment || a.period - b.period,
    );
  }
}

/** The figures of one cell's passages in a group and day type (null when it has none). */
function rowOf(
  cell: Passages,
  group: number,
  dayType: number,
  freeFlowMs: number | null,
  percentiles: readonly number[],
): Omit<PerformanceRow, "group" | "segment" | "dayType" | "period"> | null {
  const speeds: number[] = [];
  let [weight, speedSum, secondsSum, metresSum, delayS] = [0, 0, 0, 0, 0];
  for (let i = 0; i < cell.length; i++) {
    if (!(cell.groups[i] & group) || !(cell.dayTypes[i] & dayType)) continue;
    const [w, seconds, metres] = [cell.weight[i], cell.seconds[i], cell.metres[i]];
    const speed = metres / seconds;
    speeds.push(speed);
    weight += w;
    speedSum += speed * w;
    secondsSum += seconds * w;
    metresSum += metres * w;
    if (freeFlowMs !== null) delayS += w * Math.max(0, seconds - metres / freeFlowMs);
  }
  if (speeds.length === 0) return null;
  speeds.sort((a, b) => a - b);
  const avgTravelTimeS = secondsSum / weight;
  return {
    sample: speeds.length,
    avgSpeedMs: speedSum / weight,
    percentilesMs: percentiles.map((p) => nearestRank(speeds, p)),
    freeFlowMs,
    avgTravelTimeS,
    travelTimeIndex: freeFlowMs === null ? null : avgTravelTimeS / (metresSum / weight / freeFlowMs),
    delayHours: freeFlowMs === null ? null : delayS / 3600,
    weight,
  };
}
