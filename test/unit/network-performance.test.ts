import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { NetworkPerformanceTally } from "../../src/engine/analysis/network-performance.js";
import { networkOdPair } from "../../src/engine/analysis/network-od.js";
import { SegmentTally, type SegmentPassage } from "../../src/engine/analysis/segment-analysis.js";
import { Network } from "../../src/engine/network/network.js";
import { tripsToColumns } from "../../src/engine/trips/columns.js";
import type { MatchedTrip, PathStep } from "../../src/engine/trips/types.js";
import type { LonLat } from "../../src/engine/network/types.js";
import { at, seg } from "../helpers/network.js";

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

describe("a trip's first and last steps", () => {
  // One way of three 100 m segments along x: 0-100, 100-200, 200-300, each analysed on its own.
  const network = new Network("xx", [
    seg(1, 0, 1, 2, [
      [0, 0],
      [100, 0],
    ]),
    seg(1, 1, 2, 3, [
      [100, 0],
      [200, 0],
    ]),
    seg(1, 2, 3, 4, [
      [200, 0],
      [300, 0],
    ]),
  ]);
  const lookup = new Map(network.segments.map((_, i) => [i, [[i], [i]] as [number[], number[]]]));
  const sizes = { segments: 3, dayTypes: 1, dayParts: 1 };
  const step = (index: number, forward: boolean, enterS: number, exitS: number): PathStep => ({
    segmentId: network.segments[index].id,
    forward,
    enterT: enterS * 1000,
    exitT: exitS * 1000,
  });
  const matched = (origin: LonLat, destination: LonLat, path: PathStep[]): MatchedTrip => ({
    deviceId: "d",
    vehicleClass: "personal",
    source: "lbs",
    origin,
    destination,
    startT: 0,
    endT: path[path.length - 1].exitT,
    lengthM: 0,
    path,
  });
  // East from x 40 to x 250 (60 m in 12 s, 100 m in 20 s, 50 m in 10 s); west from x 180 to x 130 in 25 s.
  const east = matched(at(40, 0), at(250, 0), [
    step(0, true, 0, 12),
    step(1, true, 12, 32),
    step(2, true, 32, 42),
  ]);
  const west = matched(at(180, 0), at(130, 0), [step(1, false, 0, 25)]);
  const passagesOf = (trips: MatchedTrip[]) => {
    const cols = tripsToColumns(trips);
    const finder = new SegmentTally(lookup, network, sizes);
    return trips.map((_, i) => finder.passages(cols, i, (id) => network.indexOfSegment(id)));
  };
  const metres = (ps: SegmentPassage[]) =>
    ps.map((p) => [p.segment, Math.round(p.lengthM * 1e6) / 1e6, p.ms]);

  it("count only the stretch travelled: from the origin, to the destination, between them on one segment", () => {
    const [e, w] = passagesOf([east, west]);
    assert.deepEqual(metres(e), [
      [0, 60, 12_000],
      [1, 100, 20_000],
      [2, 50, 10_000],
    ]);
    assert.deepEqual(metres(w), [[1, 50, 25_000]]);
  });

  it("give speeds, free flow, travel time index and delay from that stretch", () => {
    const tally = new NetworkPerformanceTally();
    // The east trip at night, and at half its speed at rush hour: their first segment, x 40 to 100.
    const slow = [step(0, true, 0, 24), step(1, true, 24, 64), step(2, true, 64, 84)];
    const [[night], [rush]] = passagesOf([east, matched(east.origin, east.destination, slow)]);
    tally.add(night, trip(), { dayTypes: [0], period: 2, hour: 2 });
    tally.add(rush, trip(), { dayTypes: [0], period: 8, hour: 8 });
    const row = tally.rows([50]).find((r) => r.period === 8)!;
    // Night: 60 m / 12 s = 5 m/s is the free flow (the whole 100 m would say 8.3). Rush: 60 m / 24 s =
    // 2.5 m/s; free-flow time of 60 m is 12 s, so the index is 24 / 12 = 2 and the delay 12 s.
    assert.ok(Math.abs(row.freeFlowMs! - 5) < 1e-9);
    assert.ok(Math.abs(row.avgSpeedMs - 2.5) < 1e-9);
    assert.deepEqual(
      row.percentilesMs.map((v) => Math.round(v * 1e9) / 1e9),
      [2.5],
    );
    assert.equal(row.avgTravelTimeS, 24);
    assert.ok(Math.abs(row.travelTimeIndex! - 2) < 1e-9);
    assert.ok(Math.abs(row.delayHours! - 12 / 3600) < 1e-12);
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
