import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { CellRecords } from "../../src/engine/analysis/cell-table.js";
import { OdSums } from "../../src/engine/analysis/od-sums.js";

const slicing = {
  weekdayTypes: Array.from({ length: 8 }, () => [0]),
  slotParts: [[0], [0]],
  dayTypes: 1,
  dayParts: 1,
};

/** The same pseudo-random additions (weights on the 2^-20 grid, whole milliseconds) into `sums`. */
function addSame(sums: OdSums): OdSums {
  let x = 12345;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 5000; i++) {
    const fine = sums.fineOf(1 + Math.floor(next() * 3), 1 + Math.floor(next() * 7), Math.floor(next() * 2));
    sums.addPair(
      Math.floor(next() * 9),
      fine,
      Math.round(next() * 2 ** 22) / 2 ** 20,
      Math.round(next() * 9e5),
    );
  }
  return sums;
}

/** Cells by key (a table exports them in its own slot order). */
const byKey = (cells: CellRecords) =>
  new Map([...cells.keys].map((key, i) => [key, [cells.weights[i], cells.durations[i], cells.samples[i]]]));

describe("OD sums", () => {
  it("folds its log of additions into the table past a bound, with the same cells to the bit", () => {
    const unbounded = addSame(new OdSums(slicing, 2, 3, 3)).exportState();
    const bounded = addSame(new OdSums(slicing, 2, 3, 3, 7));
    assert.ok(bounded.loggedAdditions < 7);
    const folded = bounded.exportState();
    assert.ok(unbounded.cells.keys.length > 100);
    assert.deepEqual(byKey(folded.cells), byKey(unbounded.cells));
    assert.deepEqual(
      [folded.originTotals, folded.destinationTotals],
      [unbounded.originTotals, unbounded.destinationTotals],
    );
  });
});
