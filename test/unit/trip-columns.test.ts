import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  packOutcomes,
  packRawTrips,
  unpackOutcomes,
  unpackRawTrips,
} from "../../src/engine/ingest/trip-columns.js";
import type { MatchOutcome } from "../../src/engine/ingest/match-pool.js";
import type { MatchedTrip, RawTrip } from "../../src/engine/trips/types.js";

/** What crossing a thread does: a structured clone. */
const crossed = <T>(value: T): T => structuredClone(value);

describe("trips as columns across threads", () => {
  it("raw trips come back deep-equal, optional point and trip fields included", () => {
    const trips: RawTrip[] = [
      {
        deviceId: "a",
        vehicleClass: "personal",
        source: "lbs",
        points: [
          { lon: 7.41, lat: 43.73, t: 1_700_000_000_000 },
          { lon: -0.5, lat: 0, t: 1_700_000_030_500, speed: 12.5, heading: 270 },
          { lon: 7.4, lat: 43.7, t: 1_700_000_061_000, speed: 0 },
        ],
        purpose: "hbw",
        incomeBand: 0,
      },
      { deviceId: "b", vehicleClass: "bicycle", source: "telematics", points: [] },
      {
        deviceId: "c",
        vehicleClass: "heavy_commercial",
        source: "lbs",
        points: [{ lon: 1e-9, lat: -89.999, t: 0, heading: 0 }],
      },
    ];
    assert.deepStrictEqual(unpackRawTrips(crossed(packRawTrips(trips))), trips);
  });

  it("outcomes come back deep-equal: matched trips with their paths, errors, trips split in pieces", () => {
    const matched = (deviceId: string, steps: number): MatchedTrip => ({
      deviceId,
      vehicleClass: "personal",
      source: "lbs",
      origin: [7.41, 43.73],
      destination: [7.42, 43.74],
      startT: 1_700_000_000_000,
      endT: 1_700_000_600_000,
      lengthM: 1234.5,
      path: Array.from({ length: steps }, (_, i) => ({
        segmentId: 1_234_567_890 * 10_000 + i,
        forward: i % 2 === 0,
        enterT: 1_700_000_000_000 + i * 1000.25,
        exitT: 1_700_000_000_000 + (i + 1) * 1000.25,
      })),
      purpose: "hbo",
      incomeBand: 3,
    });
    const withoutAttributes = ({ purpose: _p, incomeBand: _i, ...trip }: MatchedTrip): MatchedTrip => trip;
    const outcomes: MatchOutcome[] = [
      { matched: [matched("a", 3)] },
      { error: "no candidates" },
      { matched: [] },
      { matched: [matched("b", 1), withoutAttributes(matched("b", 0))] },
    ];
    const expected = structuredClone(outcomes);
    assert.deepStrictEqual(unpackOutcomes(crossed(packOutcomes(outcomes))), expected);
  });
});
