import { SPEED_BINS, type SegmentStatCell } from "../../src/engine/counts/segment-stats.js";
import type { Rng } from "../../src/engine/simulate/rng.js";
import { SEGMENT_COUNT_CLASSES } from "../../src/engine/trips/codes.js";
import { TRACE_SOURCES, TRIP_PURPOSES } from "../../src/engine/trips/types.js";

/**
 * Random segment-count cells over the given segments and months, repeated keys included.
 * `speeds`: "exact" sums on a quarter-km/h grid (any order of addition gives the same bits); "arbitrary"
 * uses every mantissa bit, so another order of addition would show in the last bits.
 * `detailed`: a speed histogram of one speed at a time over every bin, random shares of every purpose and
 * income band, and cells of no trips; otherwise one bin, one purpose and one income band, at least one trip.
 */
export function randomCells(
  rng: Rng,
  n: number,
  over: {
    segments: readonly number[];
    months: readonly string[];
    speeds: "exact" | "arbitrary";
    detailed?: boolean;
  },
): SegmentStatCell[] {
  const pick = <T>(list: readonly T[]) => list[rng.int(list.length)];
  return Array.from({ length: n }, () => {
    const trips = over.detailed ? rng.int(21) : 1 + rng.int(20);
    const speedCount = rng.int(trips + 1);
    return {
      segmentId: pick(over.segments),
      month: pick(over.months),
      dayOfWeek: 1 + rng.int(7),
      hour: rng.int(24),
      direction: pick(["with", "against"] as const),
      vehicleClass: pick(SEGMENT_COUNT_CLASSES),
      source: pick(TRACE_SOURCES),
      trips,
      speedCount,
      speedSumKph:
        speedCount *
        (over.speeds === "exact" ? rng.int(480) / 4 : 130 * (rng.next() + rng.next() * 2 ** -32)),
      ...(over.detailed ? detailsOf(rng, trips, speedCount) : simpleDetails(rng, trips, speedCount)),
    };
  });
}

type Details = Pick<SegmentStatCell, "speedHistogram" | "purposes" | "incomes">;

function simpleDetails(rng: Rng, trips: number, speedCount: number): Details {
  return {
    speedHistogram: speedCount > 0 ? [0, speedCount] : [],
    purposes: { hbw: rng.int(trips + 1) },
    incomes: { "3": rng.int(trips + 1) },
  };
}

function detailsOf(rng: Rng, trips: number, speedCount: number): Details {
  const speedHistogram: number[] = [];
  for (let k = 0; k < speedCount; k++) {
    const bin = rng.int(SPEED_BINS);
    speedHistogram[bin] = (speedHistogram[bin] ?? 0) + 1;
  }
  const purposes: Record<string, number> = {};
  for (const p of TRIP_PURPOSES) if (rng.chance(0.4)) purposes[p] = rng.int(trips + 1);
  const incomes: Record<string, number> = {};
  for (let band = 0; band <= 7; band++) if (rng.chance(0.3)) incomes[String(band)] = rng.int(trips + 1);
  return { speedHistogram, purposes, incomes };
}
