import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MatchedTripBatch } from "../../src/engine/ingest/matched-batch.js";
import type { MatchedTrip, PathStep } from "../../src/engine/trips/types.js";

function trip(deviceId: string, steps: number, extra: Partial<MatchedTrip> = {}): MatchedTrip {
  const path: PathStep[] = Array.from({ length: steps }, (_, k) => ({
    segmentId: 4_012_345_670_000 + k,
    forward: k % 3 !== 0,
    enterT: 1_700_000_000_000 + k * 1234.5678,
    exitT: 1_700_000_000_000 + (k + 1) * 1234.5678 - 0.001,
  }));
  return {
    deviceId,
    vehicleClass: "personal",
    source: "lbs",
    origin: [7.41, 43.73],
    destination: [7.42, 43.74],
    startT: 1_700_000_000_000,
    endT: 1_700_000_000_000 + steps * 1234.5678,
    lengthM: 123.25 * steps,
    path,
    ...extra,
  };
}

describe("a batch of matched trips", () => {
  it("gives back trips deep-equal to those pushed, in order, paths longer than its first columns included", () => {
    const trips = [
      trip("a", 3, { purpose: "hbw", incomeBand: 0 }),
      trip("b", 1500),
      trip("c", 0),
      trip("d", 700, { vehicleClass: "bicycle", source: "telematics" }),
    ];
    const expected = structuredClone(trips);
    const batch = new MatchedTripBatch();
    for (const t of trips) batch.push(t);
    assert.equal(batch.length, 4);
    assert.deepStrictEqual(batch.take(), expected);
  });

  it("builds a path afresh at each read, equal each time", () => {
    const batch = new MatchedTripBatch();
    batch.push(trip("a", 5));
    const [taken] = batch.take();
    assert.notEqual(taken.path, taken.path);
    assert.deepStrictEqual(taken.path, trip("a", 5).path);
    assert.deepStrictEqual(JSON.parse(JSON.stringify(taken)), JSON.parse(JSON.stringify(trip("a", 5))));
  });
});
