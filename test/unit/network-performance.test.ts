import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { NetworkPerformanceTally } from "../../src/engine/analysis/network-performance.js";
import { networkOdPair } from "../../src/engine/analysis/network-od.js";

const passage = (segment: number, enterT: number, seconds: number, lengthM = 100) => ({
  segment,
  enterT,
  lengthM,
  ms: seconds * 1000,
});
const trip = (weight = 1) => ({ weight, groups: [0] });

describe("NetworkPerformanceTally", () => {
  it("takes free-flow speed from night speeds and derives travel time index and delay from it", () => {
    const tally = new NetworkPerformanceTally();
    // Night (02:00): 100 m in 10, 10, 5 s → 10, 10, 20 m/s; nearest-rank p85 of 3 is the 3rd: 20 m/s.
    for (const s of [10, 10, 5]) tally.add(passage(0, 0, s), trip(), { dayTypes: [0], period: 2, hour: 2 });
    // Rush hour (08:00): 100 m in 20 s and 40 s, weights 1 and 3.
    tally.add(passage(0, 0, 20), trip(1), { dayTypes: [0], period: 8, hour: 8 });
    tally.add(passage(0, 0, 40), trip(3), { dayTypes: [0], period: 8, hour: 8 });
    const rush = tally.rows([50]).find((r) => r.period === 8)!;
    assert.equal(rush.freeFlowMs, 20);
    // Weighted mean speed (5 + 3 × 2.5) / 4 = 3.125 m/s; mean time (20 + 120) / 4 = 35 s.
    assert.equal(rush.avgSpeedMs, 3.125);
    assert.equal(rush.avgTravelTimeS, 35);
    // Free-flow time of 100 m: 5 s; index 35 / 5 = 7; delay (1 × 15 + 3 × 35) s = 120 s = 1/30 h.
    assert.equal(rush.travelTimeIndex, 7);
    assert.ok(Math.abs(rush.delayHours! - 120 / 3600) < 1e-12);
    assert.deepEqual(rush.percentilesMs, [2.5]);
    assert.equal(rush.sample, 2);
  });

  it("ignores passages without a measurable time", () => {
    const tally = new NetworkPerformanceTally();
    tally.add(passage(0, 0, 0), trip(), { dayTypes: [0], period: 8, hour: 8 });
    assert.deepEqual(tally.rows([50]), []);
  });
});

describe("networkOdPair", () => {
  it("pairs the first origin entered with the last destination entered, timed to leaving it", () => {
    // Origins are segments 0-1, destinations 2-3 (destination index = segment - 2).
    const pair = networkOdPair(
      [passage(1, 5_000, 10), passage(0, 1_000, 10), passage(3, 60_000, 30), passage(2, 30_000, 5)],
      2,
    );
    assert.deepEqual(pair, { origin: 0, destination: 1, enterT: 1_000, durationS: 89 });
  });

  it("has no pair when the destination was entered before any origin", () => {
    assert.equal(networkOdPair([passage(2, 0, 10), passage(0, 5_000, 10)], 2), null);
    assert.equal(networkOdPair([passage(0, 0, 10)], 2), null);
  });
});
