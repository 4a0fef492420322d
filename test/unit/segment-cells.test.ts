import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SegmentCellAccumulator } from "../../src/engine/counts/segment-cells.js";
import { Network } from "../../src/engine/network/network.js";
import { LocalClock } from "../../src/engine/time.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import { gridNetwork, rowSeg } from "../helpers/counts.js";

describe("segment cells count trips, not passes", () => {
  const network = new Network("li", gridNetwork());
  const segment = network.segmentById(rowSeg(0, 0))!;
  const next = network.segmentById(rowSeg(0, 1))!;
  const t0 = Date.UTC(2025, 0, 6, 8, 59, 50);
  /** Forward, back and forward again over one short segment (junction jitter), then on to the next. */
  const zigzag = (deviceId: string): MatchedTrip => ({
    deviceId,
    vehicleClass: "personal",
    source: "lbs",
    origin: segment.coords[0],
    destination: next.coords[1],
    startT: t0,
    endT: t0 + 60_000,
    lengthM: 3 * segment.lengthM + next.lengthM,
    path: [
      { segmentId: segment.id, forward: true, enterT: t0, exitT: t0 + 9_000 },
      { segmentId: segment.id, forward: false, enterT: t0 + 9_000, exitT: t0 + 18_000 },
      // Crosses into the next hour: the trip stays in the hour of its first pass.
      { segmentId: segment.id, forward: true, enterT: t0 + 18_000, exitT: t0 + 27_000 },
      { segmentId: next.id, forward: true, enterT: t0 + 27_000, exitT: t0 + 36_000 },
    ],
  });

  it("counts each trip once per segment and direction, in the hour of its first pass", () => {
    const cells = new SegmentCellAccumulator(network, new LocalClock("UTC"));
    for (let i = 0; i < 59; i++) cells.addTrip(zigzag(`d${i}`));
    const drained = cells.drain();
    const tripsOn = (segmentId: number, direction: string) =>
      drained.filter((c) => c.segmentId === segmentId && c.direction === direction);
    const withCells = tripsOn(segment.id, "with");
    assert.deepEqual(
      withCells.map((c) => [c.hour, c.trips]),
      [[8, 59]],
    );
    assert.equal(withCells[0].speedCount, 59, "one speed sample per trip");
    assert.equal(withCells[0].purposes.hbw ?? 0, 0);
    assert.deepEqual(
      tripsOn(segment.id, "against").map((c) => c.trips),
      [59],
    );
    assert.deepEqual(
      tripsOn(next.id, "with").map((c) => c.trips),
      [59],
    );
  });
});
