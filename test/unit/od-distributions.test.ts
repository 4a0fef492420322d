import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { binColumns, binOf, nearestRank } from "../../src/engine/analysis/od-distributions.js";

describe("distribution helpers", () => {
  const bins = [
    { from: 1, to: 1.2 },
    { from: 1.2, to: 2 },
    { from: 2, to: null },
  ];

  it("puts a value in the bin [from, to) holding it, -1 outside every bin", () => {
    assert.deepEqual(
      [0.9, 1, 1.19, 1.2, 2, 500].map((v) => binOf(bins, v)),
      [-1, 0, 0, 1, 2, 2],
    );
    assert.equal(binOf([{ from: 0, to: 10 }], 10), -1);
  });

  it("names bin columns after the bins as written", () => {
    assert.deepEqual(binColumns("trip_circuity", bins), [
      "trip_circuity_1_1.2",
      "trip_circuity_1.2_2",
      "trip_circuity_2_plus",
    ]);
  });

  it("takes nearest-rank percentiles", () => {
    const sorted = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
    assert.deepEqual(
      [1, 5, 10, 11, 50, 85, 99].map((p) => nearestRank(sorted, p)),
      [10, 10, 10, 20, 50, 90, 100],
    );
  });
});
