import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { TopRoutesTally, type RouteTrip } from "../../src/engine/analysis/top-routes.js";

/** Segments 0..9 of 100 m each, but segment 9 of 400 m. */
const lengthOf = (segment: number) => (segment === 9 ? 400 : 100);
const trip = (segments: number[], minutes = 10, weight = 1): RouteTrip => ({
  segments,
  forward: segments.map(() => 1),
  startT: 0,
  endT: minutes * 60_000,
  weight,
  groups: [0],
});
const SLICE = { dayTypes: [0], dayParts: [0] };

function rowsOf(trips: RouteTrip[], top = 10) {
  const tally = new TopRoutesTally(lengthOf, top);
  for (const t of trips) tally.add([0], t, SLICE);
  return { tally, rows: tally.rows() };
}

describe("top routes grouping", () => {
  it("merges paths sharing ≥ 80 % of the longer one's length into the most used one's route", () => {
    // 1-2-3-4-5 (500 m) × 3; 1-2-3-4 (400 m, all shared: 400 / 500 = 80 %) × 1; 1-2-3 (60 %) × 2.
    const { tally, rows } = rowsOf([
      ...Array.from({ length: 3 }, () => trip([1, 2, 3, 4, 5])),
      trip([1, 2, 3, 4]),
      trip([1, 2, 3]),
      trip([1, 2, 3]),
    ]);
    assert.deepEqual(
      rows.map((r) => [r.rank, r.route, r.weight, r.sample, r.lengthM]),
      [
        [1, 1, 4, 4, 500],
        [2, 2, 2, 2, 300],
      ],
    );
    assert.deepEqual(
      tally.routePath(1).map((s) => s.segment),
      [1, 2, 3, 4, 5],
    );
  });

  it("counts a segment travelled the other way as another step", () => {
    const back = { ...trip([3, 2, 1]), forward: [0, 0, 0] };
    const { rows } = rowsOf([trip([1, 2, 3]), back]);
    assert.equal(rows.length, 2);
  });

  it("gives the same routes whatever order the trips come in", () => {
    const trips = [
      trip([1, 2, 3, 9]),
      trip([1, 2, 3, 9], 12),
      trip([1, 2, 3, 4, 5, 6], 8),
      trip([1, 2, 3, 4, 5, 7], 9),
      trip([1, 2, 3, 4, 5, 6], 8),
      trip([1, 2, 3, 4, 5, 7], 9),
      trip([2, 3, 4], 5),
    ];
    const forward = rowsOf(trips).rows;
    const backward = rowsOf([...trips].reverse()).rows;
    assert.deepEqual(backward, forward);
    // 1-2-3-9 (700 m) is its own route; the two 600 m paths share 500 m (83 %): one route of 4 trips.
    assert.deepEqual(
      forward.map((r) => [r.rank, r.sample, r.lengthM]),
      [
        [1, 4, 600],
        [2, 2, 700],
        [3, 1, 300],
      ],
    );
  });

  it("keeps the top N per slice and says each route's share of the subject's trips", () => {
    const { rows } = rowsOf([trip([1]), trip([1]), trip([5]), trip([7], 10, 3)], 2);
    assert.deepEqual(
      rows.map((r) => [r.rank, r.weight, r.subjectWeight]),
      [
        [1, 3, 6],
        [2, 2, 6],
      ],
    );
  });
});
