import type { Network } from "../network/network.js";
import type { TripColumns } from "../trips/columns.js";
import { nearestRank } from "./od-distributions.js";

/**
 * Which analysed segments a network segment belongs to, by travel direction: `[against, along]` its
 * geometry (a directional zone accepts only one of them).
 */
export type SegmentLookup = Map<number, [number[], number[]]>;

/**
 * Metres trip i travelled on its path step k, whose network segment is `index`: the segment's whole length
 * but on the trip's first step, counted from the snapped origin, and its last, counted to the snapped
 * destination (a one-step trip: origin to destination along it). Every analysis built on passages
 * (Segment_Analysis, Network_Performance, Network_OD) measures speeds over these metres.
 */
export function travelledOnStep(
  network: Network,
  cols: TripColumns,
  i: number,
  k: number,
  index: number,
): number {
  const segment = network.segments[index];
  const first = k === cols.pathStart[i];
  const last = k === cols.pathStart[i + 1] - 1;
  if (!first && !last) return segment.lengthM;
  return network.travelledM(
    segment,
    cols.pathForward[k] === 1,
    first ? [cols.originLon[i], cols.originLat[i]] : null,
    last ? [cols.destLon[i], cols.destLat[i]] : null,
  );
}

/** Where a trip's passage over one analysed segment falls and what it was like. */
export interface SegmentPassage {
  segment: number;
  /** Epoch ms when the trip entered the analysed segment (its day type and part). */
  enterT: number;
  /** Metres travelled on it and the time taken (ms). */
  lengthM: number;
  ms: number;
}

interface Cell {
  weight: number;
  sample: number;
  /** Weighted sum of speeds (m/s) and the weight of the trips with a speed. */
  speedSum: number;
  speedWeight: number;
  speeds: number[];
  durationS: number;
  tripLengthM: number;
}

export interface SegmentRow {
  group: number;
  segment: number;
  dayType: number;
  dayPart: number;
  /** Summed expansion weight (the caller averages it per day). */
  weight: number;
  sample: number;
  /** Expansion-weighted mean speed on the segment, m/s; null when no trip had a measurable time. */
  avgSpeedMs: number | null;
  /** Nearest-rank percentiles of the sampled speeds, m/s, in the order asked for. */
  percentilesMs: number[] | null;
  avgTripDurationS: number;
  avgTripLengthM: number;
}

/**
 * Segment analysis: per analysed segment, device group, day type and day part, the trips that travel
 * it (each once), their speed on it (its length over the time between entering and leaving it, from
 * the matched path's step times) and their whole-trip duration and length.
 */
export class SegmentTally {
  private readonly cells = new Map<number, Cell>();
  private readonly met = new Map<number, SegmentPassage>();

  constructor(
    private readonly lookup: SegmentLookup,
    private readonly network: Network,
    private readonly sizes: { segments: number; dayTypes: number; dayParts: number },
  ) {}

  /**
   * The analysed segments trip i travels, each once: the steps on its network segments summed (the metres
   * of `travelledOnStep`), entered at the first. `indexOf` maps a stored segment id to its network index.
   */
  passages(
    cols: TripColumns,
    i: number,
    indexOf: (segmentId: number) => number | undefined,
  ): SegmentPassage[] {
    this.met.clear();
    const start = cols.startT[i];
    for (let k = cols.pathStart[i]; k < cols.pathStart[i + 1]; k++) {
      const index = indexOf(cols.pathSegmentId[k]);
      if (index === undefined) continue;
      const entry = this.lookup.get(index);
      if (!entry) continue;
      const ms = cols.pathExitMs[k] - cols.pathEnterMs[k];
      const lengthM = travelledOnStep(this.network, cols, i, k, index);
      for (const segment of entry[cols.pathForward[k]]) {
        const seen = this.met.get(segment);
        if (seen) {
          seen.lengthM += lengthM;
          seen.ms += ms;
        } else this.met.set(segment, { segment, enterT: start + cols.pathEnterMs[k], lengthM, ms });
      }
    }
    return [...this.met.values()];
  }

  /** Counts one passage in each of the trip's groups and the passage's day types and parts. */
  add(
    passage: SegmentPassage,
    trip: { weight: number; groups: readonly number[]; durationS: number; lengthM: number },
    slice: { dayTypes: readonly number[]; dayParts: readonly number[] },
  ): void {
    const speed = passage.ms > 0 ? passage.lengthM / (passage.ms / 1000) : null;
    for (const group of trip.groups)
      for (const dayType of slice.dayTypes)
        for (const dayPart of slice.dayParts) {
          const key = this.keyOf(group, passage.segment, dayType, dayPart);
          let cell = this.cells.get(key);
          if (!cell) {
            cell = {
              weight: 0,
              sample: 0,
              speedSum: 0,
              speedWeight: 0,
              speeds: [],
              durationS: 0,
              tripLengthM: 0,
            };
            this.cells.set(key, cell);
          }
          cell.weight += trip.weight;
          cell.sample++;
          cell.durationS += trip.durationS;
          cell.tripLengthM += trip.lengthM;
          if (speed !== null) {
            cell.speedSum += speed * trip.weight;
            cell.speedWeight += trip.weight;
            cell.speeds.push(speed);
          }
        }
  }

  private keyOf(group: number, segment: number, dayType: number, dayPart: number): number {
    const { segments, dayTypes, dayParts } = this.sizes;
    return ((group * dayTypes + dayType) * dayParts + dayPart) * segments + segment;
  }

  /** Rows with trips, ordered day type → group → segment → day part. */
  rows(percentiles: readonly number[] | null): SegmentRow[] {
    const { segments, dayTypes, dayParts } = this.sizes;
    const rows: SegmentRow[] = [];
    for (const [key, cell] of this.cells) {
      const segment = key % segments;
      const slice = (key - segment) / segments;
      const dayPart = slice % dayParts;
      const rest = (slice - dayPart) / dayParts;
      const sorted = percentiles && cell.speeds.length ? [...cell.speeds].sort((a, b) => a - b) : null;
      rows.push({
        group: Math.floor(rest / dayTypes),
        segment,
        dayType: rest % dayTypes,
        dayPart,
        weight: cell.weight,
        sample: cell.sample,
        avgSpeedMs: cell.speedWeight > 0 ? cell.speedSum / cell.speedWeight : null,
        percentilesMs: sorted && percentiles ? percentiles.map((p) => nearestRank(sorted, p)) : null,
        avgTripDurationS: cell.durationS / cell.sample,
        avgTripLengthM: cell.tripLengthM / cell.sample,
      });
    }
    return rows.sort(
      (a, b) => a.dayType - b.dayType || a.group - b.group || a.segment - b.segment || a.dayPart - b.dayPart,
    );
  }
}
