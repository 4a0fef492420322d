/**
 * Rules of the matcher for waiting cars and stray fixes (issue 16, measured on the SUMO traces in
 * docs/map-matching.md): jitter at a stop must not become a spur or a back-and-forth along the road,
 * and one fix that noise put beside a road the car cannot leave must not break the trip.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { matchTrip } from "../../src/engine/matching/index.js";
import { segmentIdOf } from "../../src/engine/network/types.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import { networkOf, tripOf, type XY } from "../helpers/metric-network.js";

const id = segmentIdOf;
const stepsOf = (trip: MatchedTrip) => trip.path.map((s) => [s.segmentId, s.forward]);
const eastbound = [
  [id(1, 0), true],
  [id(1, 1), true],
  [id(1, 2), true],
];

test("a car waiting at a junction with jittering fixes makes no spur back along the road behind it", () => {
  // A 20 m piece of road before the junction at x = 300, a side street leaving at x = 280.
  const network = networkOf([
    {
      wayId: 1,
      index: 0,
      from: 1,
      to: 2,
      xy: [
        [0, 0],
        [280, 0],
      ],
    },
    {
      wayId: 1,
      index: 1,
      from: 2,
      to: 3,
      xy: [
        [280, 0],
        [300, 0],
      ],
    },
    {
      wayId: 1,
      index: 2,
      from: 3,
      to: 4,
      xy: [
        [300, 0],
        [600, 0],
      ],
    },
    {
      wayId: 2,
      index: 0,
      from: 2,
      to: 5,
      xy: [
        [280, 0],
        [280, -200],
      ],
    },
  ]);
  const waiting: XY[] = [
    [296, 2],
    [284, -22],
    [298, 3],
    [286, -24],
    [297, 0],
  ];
  const xy: XY[] = [[100, 0], [200, 0], ...waiting, [400, 0], [500, 0]];
  // The small tolerance of before: this rule alone (turning back inside a routed leg is a U-turn) fixes it.
  const matched = matchTrip(network, tripOf(xy, 10), { backwardToleranceM: 20 });
  assert.equal(matched.length, 1);
  assert.deepEqual(stepsOf(matched[0]), eastbound);
});

test("fixes of a car waiting mid-road that jump back 30 m are noise, not a pair of U-turns", () => {
  const network = networkOf([
    {
      wayId: 1,
      index: 0,
      from: 1,
      to: 2,
      xy: [
        [0, 0],
        [300, 0],
      ],
    },
    {
      wayId: 1,
      index: 1,
      from: 2,
      to: 3,
      xy: [
        [300, 0],
        [600, 0],
      ],
    },
    {
      wayId: 1,
      index: 2,
      from: 3,
      to: 4,
      xy: [
        [600, 0],
        [900, 0],
      ],
    },
  ]);
  // Waiting at x ≈ 165: each kept fix is more than 2σ from the one before, some 30 m behind it.
  const xy: XY[] = [
    [50, 0],
    [100, 0],
    [150, 0],
    [180, 0],
    [152, 8],
    [182, -6],
    [150, 5],
    [181, 0],
    [250, 0],
    [350, 0],
    [450, 0],
    [650, 0],
    [800, 0],
  ];
  const [m, ...rest] = matchTrip(network, tripOf(xy, 10));
  assert.equal(rest.length, 0);
  assert.deepEqual(stepsOf(m), eastbound);
  const strict = matchTrip(network, tripOf(xy, 10), { backwardToleranceM: 20 });
  assert.ok(
    strict[0].path.some((s) => !s.forward),
    "with the tolerance of before the steps back were matched as U-turns",
  );
});

test("one stray fix beside a oneway dead end does not break the trip", () => {
  const network = networkOf([
    {
      wayId: 1,
      index: 0,
      from: 1,
      to: 2,
      xy: [
        [0, 0],
        [400, 0],
      ],
    },
    {
      wayId: 1,
      index: 1,
      from: 2,
      to: 3,
      xy: [
        [400, 0],
        [900, 0],
      ],
    },
    // A oneway ramp out of the road that leads nowhere the car can come back from.
    {
      wayId: 3,
      index: 0,
      from: 2,
      to: 6,
      xy: [
        [400, 0],
        [450, 30],
      ],
      oneway: true,
    },
  ]);
  const xy: XY[] = [
    [250, 0],
    [350, 0],
    [452, 29],
    [550, 0],
    [650, 0],
  ];
  // One candidate per fix stands in for a fix whose road is crowded out by closer ones (e.g. ramps).
  const matched = matchTrip(network, tripOf(xy, 10), { maxCandidates: 1 });
  assert.equal(matched.length, 1, "one trip, the stray fix dropped");
  assert.deepEqual(stepsOf(matched[0]), [
    [id(1, 0), true],
    [id(1, 1), true],
  ]);
});
