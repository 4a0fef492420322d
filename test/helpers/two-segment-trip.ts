import type { MatchedTrip, VehicleClass } from "../../src/engine/trips/types.js";

/** A segment id above 2^32 (way id × 10,000 + piece): stores must keep it whole, as a float64. */
export const BIG_SEGMENT_ID = 1_234_567_890 * 10_000 + 3;

/**
 * A ten-minute lbs trip starting at `start` over two segments, the big-id one forward, then segment 42
 * against its geometry; coordinates and length with more digits than a store keeps, so round trips show it.
 */
export function twoSegmentTrip(
  deviceId: string,
  start: string,
  vehicleClass: VehicleClass = "personal",
  extra = {},
): MatchedTrip {
  const startT = Date.parse(start);
  return {
    deviceId,
    vehicleClass,
    source: "lbs",
    origin: [13.123456789, 52.987654321],
    destination: [13.2, 52.9],
    startT,
    endT: startT + 600_000,
    lengthM: Math.fround(4321.5),
    path: [
      { segmentId: BIG_SEGMENT_ID, forward: true, enterT: startT, exitT: startT + 61_234 },
      { segmentId: 42, forward: false, enterT: startT + 61_234, exitT: startT + 600_000 },
    ],
    ...extra,
  };
}
