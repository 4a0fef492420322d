import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { IndexedPolygon, segmentsIntersect } from "../../src/engine/network/polygon-select.js";
import type { LonLat } from "../../src/engine/network/types.js";
import { boxRing } from "../../src/shared/geometry.js";

const square = (w: number, s: number, e: number, n: number): LonLat[] => boxRing([w, s, e, n]);

describe("IndexedPolygon", () => {
  const withHole = new IndexedPolygon([square(0, 0, 10, 10), square(4, 4, 6, 6)]);

  it("tells inside from outside and from the hole", () => {
    assert.equal(withHole.contains([1, 1]), true);
    assert.equal(withHole.contains([5, 5]), false);
    assert.equal(withHole.contains([11, 5]), false);
    assert.equal(withHole.contains([-1, 5]), false);
    assert.deepEqual(withHole.bbox, [0, 0, 10, 10]);
  });

  it("meets lines with a vertex inside, crossing, or touching the boundary", () => {
    assert.equal(
      withHole.meetsLine([
        [1, 1],
        [2, 2],
      ]),
      true,
    );
    assert.equal(
      withHole.meetsLine([
        [-5, 5],
        [15, 5],
      ]),
      true,
      "crosses without a vertex inside",
    );
    assert.equal(
      withHole.meetsLine([
        [-5, 10],
        [15, 10],
      ]),
      true,
      "runs along the boundary",
    );
    assert.equal(
      withHole.meetsLine([
        [10, 12],
        [12, 10],
      ]),
      false,
    );
    assert.equal(
      withHole.meetsLine([
        [4.5, 4.5],
        [5.5, 5.5],
      ]),
      false,
      "inside the hole",
    );
    assert.equal(
      withHole.meetsLine([
        [11, 11],
        [12, 12],
      ]),
      false,
    );
  });
});

describe("segmentsIntersect", () => {
  it("handles proper crossings, touching ends, collinear overlap and disjoint lines", () => {
    assert.equal(segmentsIntersect([0, 0], [2, 2], [0, 2], [2, 0]), true);
    assert.equal(segmentsIntersect([0, 0], [1, 1], [1, 1], [2, 0]), true);
    assert.equal(segmentsIntersect([0, 0], [2, 0], [1, 0], [3, 0]), true);
    assert.equal(segmentsIntersect([0, 0], [1, 0], [2, 0], [3, 0]), false);
    assert.equal(segmentsIntersect([0, 0], [1, 1], [0, 1], [1, 2]), false);
  });
});
