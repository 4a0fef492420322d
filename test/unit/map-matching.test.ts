import { test } from "node:test";
import assert from "node:assert/strict";
import {
  matchTrip,
  matchedLine,
  routeMismatchFraction,
  endpointErrorM,
} from "../../src/engine/matching/index.js";
import { segmentIdOf } from "../../src/engine/network/types.js";
import type { Network } from "../../src/engine/network/network.js";
import type { MatchedTrip, RawTrip } from "../../src/engine/trips/types.js";
import { gaussianSource, lonLatOf, networkOf, tripOf, type XY } from "../helpers/metric-network.js";

const id = segmentIdOf;
const stepsOf = (trip: MatchedTrip) => trip.path.map((s) => [s.segmentId, s.forward]);

function noisy(xy: XY[], sigmaM: number, seed = 7): XY[] {
  const normal = gaussianSource(seed);
  return xy.map(([x, y]) => [x + sigmaM * normal(), y + sigmaM * normal()]);
}

function range(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; step > 0 ? v <= to : v >= to; v += step) out.push(v);
  return out;
}

/** Two straight roads of one segment each that never meet: ways `wayIds`, nodes 1–2 and 3–4. */
function unlinkedRoads(first: XY[], second: XY[], wayIds = [1, 2]): Network {
  return networkOf([
    { wayId: wayIds[0], from: 1, to: 2, xy: first },
    { wayId: wayIds[1], from: 3, to: 4, xy: second },
  ]);
}

function assertTimesMonotone(trip: MatchedTrip): void {
  let t = trip.startT;
  for (const s of trip.path) {
    assert.ok(s.enterT >= t && s.exitT >= s.enterT, `times must not go back (${t}, ${s.enterT}, ${s.exitT})`);
    t = s.exitT;
  }
  assert.ok(trip.endT >= t);
}

// A 900 m road in three pieces with a side street at x = 300.
const straight = networkOf([
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
  {
    wayId: 2,
    index: 0,
    from: 2,
    to: 5,
    xy: [
      [300, 0],
      [300, 200],
    ],
  },
]);

test("a noisy trace along a straight road matches its exact path with interpolated times", () => {
  const trip = tripOf(
    noisy(
      range(10, 890, 40).map((x) => [x, 0]),
      5,
    ),
    4,
  );
  const matched = matchTrip(straight, trip);
  assert.equal(matched.length, 1);
  const [m] = matched;
  assert.deepEqual(stepsOf(m), [
    [id(1, 0), true],
    [id(1, 1), true],
    [id(1, 2), true],
  ]);
  assert.equal(m.deviceId, "dev-1");
  assert.equal(m.startT, trip.points[0].t);
  assert.equal(m.endT, trip.points[trip.points.length - 1].t);
  assert.ok(Math.abs(m.lengthM - 880) < 20, `length ${m.lengthM}`);
  assertTimesMonotone(m);
  // 10 m/s: x = 300 is reached about 29 s after the first fix at x ≈ 10.
  const enterSecond = (m.path[1].enterT - m.startT) / 1000;
  assert.ok(Math.abs(enterSecond - 29) < 2, `entered the second piece after ${enterSecond} s`);
  assert.equal(m.path[0].exitT, m.path[1].enterT);
  const errors = endpointErrorM(straight, { origin: lonLatOf([10, 0]), destination: lonLatOf([890, 0]) }, m);
  assert.ok(errors.originM < 15 && errors.destinationM < 15);
  const line = matchedLine(straight, m);
  assert.deepEqual([line[0], line[line.length - 1]], [m.origin, m.destination]);
  assert.ok(Math.abs(straight.ruler.lineDistance(line) - m.lengthM) < 0.5);
});

test("standing still produces no detour and keeps the trip whole", () => {
  const waiting: XY[] = noisy(
    Array.from({ length: 12 }, () => [100, 0] as XY),
    3,
    11,
  );
  const moving: XY[] = range(150, 850, 50).map((x) => [x, 0]);
  const [m, ...rest] = matchTrip(straight, tripOf([...waiting, ...moving], 5));
  assert.equal(rest.length, 0);
  assert.deepEqual(stepsOf(m), [
    [id(1, 0), true],
    [id(1, 1), true],
    [id(1, 2), true],
  ]);
  assert.ok(Math.abs(m.lengthM - 750) < 15, `length ${m.lengthM}`);
  assertTimesMonotone(m);
});

test("a small step back of a slow vehicle is noise, not a U-turn or a loop", () => {
  // The third fix is 10 m behind the second along the road (and 18 m to the side, so it is kept).
  const xy: XY[] = [[100, 0], [130, 0], [120, 18], ...range(170, 870, 50).map((x): XY => [x, 0])];
  const [m, ...rest] = matchTrip(straight, tripOf(xy, 10));
  assert.equal(rest.length, 0);
  assert.deepEqual(stepsOf(m), [
    [id(1, 0), true],
    [id(1, 1), true],
    [id(1, 2), true],
  ]);
  assert.ok(Math.abs(m.lengthM - 770) < 1, `length ${m.lengthM}`);
  assertTimesMonotone(m);
  const strict = matchTrip(straight, tripOf(xy, 10), { backwardToleranceM: 0 });
  assert.notDeepEqual(stepsOf(strict[0]), stepsOf(m), "without the tolerance the step back costs a detour");
});

test("a trace along one of two parallel roads 40 m apart does not jump to the other", () => {
  const parallel = networkOf([
    {
      wayId: 10,
      index: 0,
      from: 1,
      to: 2,
      xy: [
        [0, 0],
        [500, 0],
      ],
    },
    {
      wayId: 10,
      index: 1,
      from: 2,
      to: 3,
      xy: [
        [500, 0],
        [1000, 0],
      ],
    },
    {
      wayId: 11,
      index: 0,
      from: 4,
      to: 5,
      xy: [
        [0, 40],
        [1000, 40],
      ],
    },
    {
      wayId: 12,
      index: 0,
      from: 1,
      to: 4,
      xy: [
        [0, 0],
        [0, 40],
      ],
    },
    {
      wayId: 13,
      index: 0,
      from: 3,
      to: 5,
      xy: [
        [1000, 0],
        [1000, 40],
      ],
    },
  ]);
  // Noise of 8 m, and every fourth fix pulled 22 m towards the other road (closer to it).
  const xy = noisy(
    range(50, 950, 60).map((x) => [x, 0]),
    8,
    3,
  ).map(([x, y], i): XY => [x, i % 4 === 2 ? 22 : y]);
  const matched = matchTrip(parallel, tripOf(xy, 6));
  assert.equal(matched.length, 1);
  assert.deepEqual(stepsOf(matched[0]), [
    [id(10, 0), true],
    [id(10, 1), true],
  ]);
});

// A two-way road, a oneway piece (eastbound), a two-way road; optionally a two-way bypass 30 m north.
function onewayNetwork(withBypass: boolean) {
  return networkOf([
    {
      wayId: 20,
      from: 1,
      to: 2,
      xy: [
        [0, 0],
        [400, 0],
      ],
    },
    {
      wayId: 21,
      from: 2,
      to: 3,
      xy: [
        [400, 0],
        [800, 0],
      ],
      oneway: true,
    },
    {
      wayId: 22,
      from: 3,
      to: 4,
      xy: [
        [800, 0],
        [1200, 0],
      ],
    },
    ...(withBypass
      ? [
          {
            wayId: 23,
            from: 2,
            to: 3,
            xy: [
              [400, 0],
              [400, 30],
              [800, 30],
              [800, 0],
            ] as XY[],
          },
        ]
      : []),
  ]);
}
const westbound = () =>
  tripOf(
    noisy(
      range(1150, 50, -60).map((x) => [x, 5]),
      4,
      5,
    ),
    10,
  );

test("a trace against a oneway is matched onto a nearby two-way road", () => {
  const matched = matchTrip(onewayNetwork(true), westbound());
  assert.equal(matched.length, 1);
  assert.deepEqual(stepsOf(matched[0]), [
    [id(22, 0), false],
    [id(23, 0), false],
    [id(20, 0), false],
  ]);
});

test("a trace against a oneway with no way around breaks instead of travelling it backwards", () => {
  const matched = matchTrip(onewayNetwork(false), westbound());
  assert.deepEqual(matched.map(stepsOf), [[[id(22, 0), false]], [[id(20, 0), false]]]);
});

test("a U-turn at a dead end is matched as in and back out", () => {
  const network = networkOf([
    {
      wayId: 30,
      index: 0,
      from: 1,
      to: 2,
      xy: [
        [0, 0],
        [500, 0],
      ],
    },
    {
      wayId: 30,
      index: 1,
      from: 2,
      to: 3,
      xy: [
        [500, 0],
        [1000, 0],
      ],
    },
    {
      wayId: 31,
      index: 0,
      from: 2,
      to: 9,
      xy: [
        [500, 0],
        [500, 300],
      ],
    },
  ]);
  const xy: XY[] = [
    ...range(100, 450, 50).map((x): XY => [x, 0]),
    ...[50, 100, 150, 200, 250, 290].map((y): XY => [500, y]),
    ...[240, 190, 140, 90, 40].map((y): XY => [500, y]),
    ...range(550, 900, 50).map((x): XY => [x, 0]),
  ];
  const matched = matchTrip(network, tripOf(noisy(xy, 3, 9), 5));
  assert.equal(matched.length, 1);
  assert.deepEqual(stepsOf(matched[0]), [
    [id(30, 0), true],
    [id(31, 0), true],
    [id(31, 0), false],
    [id(30, 1), true],
  ]);
  assertTimesMonotone(matched[0]);
});

test("a hairpin road whose legs both pass near a fix is matched along its legs in order", () => {
  const network = networkOf([
    {
      wayId: 52,
      from: 10,
      to: 1,
      xy: [
        [-200, 0],
        [0, 0],
      ],
    },
    {
      wayId: 51,
      from: 1,
      to: 2,
      xy: [
        [0, 0],
        [300, 0],
        [300, 30],
        [0, 30],
      ],
    },
    {
      wayId: 53,
      from: 2,
      to: 11,
      xy: [
        [0, 30],
        [-200, 30],
      ],
    },
  ]);
  // Every third fix on the legs strays past the middle: 17 m from its own leg, 13 m from the other.
  const xy: XY[] = [
    ...range(-150, 280, 40).map((x, i): XY => [x, x <= 0 ? 0 : i % 3 === 0 ? 17 : 5]),
    ...range(280, -150, -40).map((x, i): XY => [x, x <= 0 ? 30 : i % 3 === 1 ? 13 : 25]),
  ];
  const matched = matchTrip(network, tripOf(xy, 5));
  assert.equal(matched.length, 1);
  assert.deepEqual(stepsOf(matched[0]), [
    [id(52, 0), true],
    [id(51, 0), true],
    [id(53, 0), true],
  ]);
  assertTimesMonotone(matched[0]);
});

const islands = unlinkedRoads(
  [
    [0, 0],
    [1000, 0],
  ],
  [
    [3000, 0],
    [4000, 0],
  ],
  [40, 41],
);

test("fixes with no road nearby split the trip in two", () => {
  const xy: XY[] = [...range(100, 900, 100), 1500, 2000, 2500, ...range(3100, 3900, 100)].map((x) => [x, 0]);
  const matched = matchTrip(islands, tripOf(xy, 10));
  assert.deepEqual(matched.map(stepsOf), [[[id(40, 0), true]], [[id(41, 0), true]]]);
  assert.equal(matched[1].startT - matched[0].endT, 4 * 10_000);
});

test("a step with no route from the previous one splits the trip", () => {
  const xy: XY[] = [...range(100, 900, 100), ...range(3100, 3900, 100)].map((x) => [x, 0]);
  const matched = matchTrip(islands, tripOf(xy, 60));
  assert.deepEqual(matched.map(stepsOf), [[[id(40, 0), true]], [[id(41, 0), true]]]);
});

test("a long time gap splits the trip", () => {
  const trip = tripOf(
    range(20, 880, 40).map((x) => [x, 0]),
    4,
  );
  trip.points.forEach((p, i) => {
    if (i >= 11) p.t += 20 * 60_000;
  });
  const matched = matchTrip(straight, trip, { maxTimeGapS: 600 });
  assert.equal(matched.length, 2);
  assert.equal(matched[0].endT, trip.points[10].t);
  assert.equal(matched[1].startT, trip.points[11].t);
});

test("fixes away from every road give no trip", () => {
  const xy: XY[] = range(0, 900, 100).map((x) => [x, 500]);
  assert.deepEqual(matchTrip(straight, tripOf(xy)), []);
});

test("matching is deterministic", () => {
  const trip = tripOf(
    noisy(
      range(10, 890, 30).map((x) => [x, 0]),
      12,
      21,
    ),
    3,
  );
  const a = matchTrip(straight, trip);
  const b = matchTrip(straight, structuredClone(trip));
  assert.deepEqual(a, b);
});

test("route mismatch fraction counts missing and extra length against the truth", () => {
  const truth = [id(1, 0), id(1, 1)];
  assert.equal(routeMismatchFraction(straight, truth, truth), 0);
  // Missing 300 m piece and an extra 200 m side street, against 600 m of truth.
  const f = routeMismatchFraction(straight, truth, [id(1, 0), id(2, 0)]);
  assert.ok(Math.abs(f - 500 / 600) < 1e-3, `fraction ${f}`);
  const directed = routeMismatchFraction(
    straight,
    [{ segmentId: id(1, 0), forward: true }],
    [{ segmentId: id(1, 0), forward: false }],
  );
  assert.equal(directed, 2);
});

// A 1,000 m road under a 200 m viaduct 70 m to its side, whose ramps are far away (not in this network).
const underViaduct = unlinkedRoads(
  [
    [0, 0],
    [1000, 0],
  ],
  [
    [400, 70],
    [600, 70],
  ],
);

test("one stray fix whose candidates miss the driven road leaves the trip whole", () => {
  // The fix at x = 500 lies 65 m off the road, within the search radius of the viaduct only.
  const trip = tripOf(
    range(50, 950, 75).map((x) => (x === 500 ? [x, 65] : [x, 0])),
    8,
  );
  const matched = matchTrip(underViaduct, trip);
  assert.equal(matched.length, 1, `pieces ${matched.length}`);
  assert.deepEqual(stepsOf(matched[0]), [[id(1, 0), true]]);
  assert.equal(matched[0].startT, trip.points[0].t);
  assert.equal(matched[0].endT, trip.points[trip.points.length - 1].t);
});

test("two fixes in a row off the driven road are not a stray: the trip breaks around them, as before", () => {
  // Two fixes on the viaduct agree with each other: the data shows a move the network cannot join up.
  const xy: XY[] = range(50, 950, 75).map((x) => (x === 425 || x === 500 ? [x, 65] : [x, 0]));
  assert.deepEqual(
    matchTrip(underViaduct, tripOf(xy, 8)).map((piece) => stepsOf(piece)),
    [[[id(1, 0), true]], [[id(2, 0), true]], [[id(1, 0), true]]],
  );
});

// A hairpin in 100 m pieces: 1,500 m up, 300 m across, 1,500 m down; its legs 300 m apart and not otherwise linked.
const hairpinCorners: XY[] = [
  ...range(0, 1500, 100).map((y) => [0, y] as XY),
  ...range(100, 200, 100).map((x) => [x, 1500] as XY),
  ...range(1500, 0, -100).map((y) => [300, y] as XY),
];
const hairpinRoads = hairpinCorners
  .slice(1)
  .map((to, i) => ({ wayId: 1, index: i, from: i + 1, to: i + 2, xy: [hairpinCorners[i], to] as XY[] }));
const hairpin = networkOf(hairpinRoads);
// Up from the piece of the first fix (y 0–100) round to the piece of the last one (y 100–0).
const roundTheHairpin = hairpinCorners.slice(1).map((_, i) => [id(1, i), true]);

/** Seen going up the hairpin's first leg, then, 250 s later, coming down its second leg from `backAtY`. */
function seenAgainAfterTheBend(backAtY: number): RawTrip {
  const before = tripOf(
    range(20, 140, 40).map((y) => [0, y] as XY),
    4,
  ).points;
  const after = tripOf(
    range(backAtY, 20, -40).map((y) => [300, y] as XY),
    4,
    before[before.length - 1].t + 250_000,
  ).points;
  return { ...tripOf([]), points: [...before, ...after] };
}

test("a vehicle unseen for minutes may have driven further than the straight line allows", () => {
  // Back 300 m from where it was last seen: 3.2 km by road.
  const matched = matchTrip(hairpin, seenAgainAfterTheBend(140));
  assert.equal(matched.length, 1, `pieces ${matched.length}`);
  assert.deepEqual(stepsOf(matched[0]), roundTheHairpin);
});

test("after minutes unseen, a fix's own road is searched further even when a side street nearby was reached", () => {
  // The hairpin with a side street from its first leg at y = 200 across to x = 265 and down to y = 100:
  // 35 m beside the second leg, a short drive from where the car was last seen.
  const withSideStreet = networkOf([
    ...hairpinRoads,
    {
      wayId: 2,
      index: 0,
      from: 3,
      to: 100,
      xy: [
        [0, 200],
        [265, 200],
      ],
    },
    {
      wayId: 2,
      index: 1,
      from: 100,
      to: 101,
      xy: [
        [265, 200],
        [265, 100],
      ],
    },
  ]);
  const matched = matchTrip(withSideStreet, seenAgainAfterTheBend(180));
  // Before: the side street was the only road reached, the next three fixes followed it, and the trip
  // broke where the second leg went on without it.
  assert.equal(matched.length, 1, `pieces ${matched.length}`);
  assert.deepEqual(stepsOf(matched[0]), roundTheHairpin);
});

// Two parallel roads 40 m apart that never meet here: a fix between them could lie on either.
const besideAnother = unlinkedRoads(
  [
    [0, 0],
    [1200, 0],
  ],
  [
    [0, 40],
    [800, 40],
  ],
);

test("a stray fix that led the piece onto the wrong road a few fixes back is left out at the break", () => {
  // Between the roads, then one fix beyond the other road (out of the driven one's reach), between them
  // again, and at last on the driven road alone.
  const y = (x: number) => (x === 425 ? 55 : x < 650 ? 20 : -15);
  const trip = tripOf(
    range(50, 950, 75).map((x) => [x, y(x)] as XY),
    10,
  );
  const matched = matchTrip(besideAnother, trip);
  // Before: the stray fix left only the other road alive, the next two followed it, and the trip broke
  // where the fixes left it: the first piece all along the other road.
  assert.equal(matched.length, 1, `pieces ${matched.length}`);
  assert.deepEqual(stepsOf(matched[0]), [[id(1, 0), true]]);
  assert.equal(matched[0].endT, trip.points[trip.points.length - 1].t);
});
