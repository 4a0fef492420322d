import type { SegmentStatCell } from "../../src/engine/counts/segment-stats.js";
import type { Rng } from "../../src/engine/simulate/rng.js";
import { SEGMENT_COUNT_CLASSES } from "../../src/engine/trips/codes.js";
import { TRACE_SOURCES } from "../../src/engine/trips/types.js";

/**
 * Random segment-count cells over the given segments and months, one purpose and one income band each.
 * `speeds`: "exact" sums on a quarter-km/h grid (any order of addition gives the same bits); "arbitrary"
 * uses every mantissa bit, so another order of addition would show in the last bits.
 */
export function randomCells(
  rng: Rng,
  n: number,
  over: { segments: readonly number[]; months: readonly string[]; speeds: "exact" | "arbitrary" },
): SegmentStatCell[] {
  const pick = <T>(list: readonly T[]) => list[rng.int(list.length)];
  return Array.from({ length: n }, () => {
    const trips = 1 + rng.int(20);
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
      speedSumKph: speedCount * (over.speeds === "exact" ? rng.int(480) / 4 : rng.next() * 120),
      speedCount,
      speedHistogram: speedCount > 0 ? [0, speedCount] : [],
      purposes: { hbw: rng.int(trips + 1) },
      incomes: { "3": rng.int(trips + 1) },
    };
  });
}
