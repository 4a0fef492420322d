import type { OdRow } from "./od-aggregate.js";
import type { SegmentPassage } from "./segment-analysis.js";

/** A trip's first origin-segment passage and last destination-segment passage, and the time between. */
export interface NetworkOdPair {
  origin: number;
  destination: number;
  /** Epoch ms the trip entered the origin segment (its day type and part). */
  enterT: number;
  /** From entering the origin segment to leaving the destination segment, seconds. */
  durationS: number;
}

/**
 * The pair of a trip over analysed segments numbered origins first (0..origins-1), then destinations:
 * the origin segment it entered first and the destination segment it entered last, provided it did not
 * enter that one before the origin. A trip meeting one segment of both sides pairs it with itself.
 * Leaving the destination is its entry plus the time spent on it. Null when the trip has no such pair.
 */
export function networkOdPair(passages: readonly SegmentPassage[], origins: number): NetworkOdPair | null {
  let first: SegmentPassage | null = null;
  let last: SegmentPassage | null = null;
  for (const p of passages) {
    if (p.segment < origins) {
      if (!first || p.enterT < first.enterT) first = p;
    } else if (!last || p.enterT > last.enterT) last = p;
  }
  if (!first || !last || last.enterT < first.enterT) return null;
  return {
    origin: first.segment,
    destination: last.segment - origins,
    enterT: first.enterT,
    durationS: (last.enterT + last.ms - first.enterT) / 1000,
  };
}

interface Cell {
  weight: number;
  sample: number;
  durationS: number;
}

/** Sums Network_OD pairs per (group, day type, day part, origin, destination), and each end's traffic. */
export class NetworkOdTally {
  private readonly cells = new Map<string, Cell>();
  private readonly ends = new Map<string, number>();

  add(
    pair: NetworkOdPair,
    trip: { weight: number; groups: readonly number[] },
    slice: { dayTypes: readonly number[]; dayParts: readonly number[] },
  ): void {
    for (const group of trip.groups)
      for (const dt of slice.dayTypes)
        for (const dp of slice.dayParts) {
          const at = `${group}|${dt}|${dp}`;
          const key = `${at}|${pair.origin}|${pair.destination}`;
          const cell = this.cells.get(key) ?? { weight: 0, sample: 0, durationS: 0 };
          cell.weight += trip.weight;
          cell.sample++;
          cell.durationS += pair.durationS;
          this.cells.set(key, cell);
          this.addEnd(`${at}|o${pair.origin}`, trip.weight);
          this.addEnd(`${at}|d${pair.destination}`, trip.weight);
        }
  }

  private addEnd(key: string, weight: number): void {
    this.ends.set(key, (this.ends.get(key) ?? 0) + weight);
  }

  /**
   * Rows ordered day type → group → origin → destination → day part; traffic values are the summed
   * weights passed through `perDay(weight, dayType)` (daily averages or totals, the caller's choice).
   */
  rows(perDay: (weight: number, dayType: number) => number): OdRow[] {
    const rows: OdRow[] = [];
    for (const [key, cell] of this.cells) {
      const [group, dayType, dayPart, origin, destination] = key.split("|").map(Number);
      const at = `${group}|${dayType}|${dayPart}`;
      rows.push({
        group,
        origin,
        destination,
        dayType,
        dayPart,
        odTraffic: perDay(cell.weight, dayType),
        originTraffic: perDay(this.ends.get(`${at}|o${origin}`) ?? 0, dayType),
        destinationTraffic: perDay(this.ends.get(`${at}|d${destination}`) ?? 0, dayType),
        avgDurationMin: Math.round(cell.durationS / cell.sample / 60),
        sample: cell.sample,
      });
    }
    return rows.sort(
      (a, b) =>
        a.dayType - b.dayType ||
        a.group - b.group ||
        a.origin - b.origin ||
        a.destination - b.destination ||
        a.dayPart - b.dayPart,
    );
  }
}
