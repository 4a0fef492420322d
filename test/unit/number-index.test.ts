import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { NumberIndex } from "../../src/engine/counts/number-index.js";

describe("NumberIndex", () => {
  it("numbers keys densely in the order first asked, through growth, large keys included", () => {
    const index = new NumberIndex(2);
    // Segment ids (way id × 10,000 + piece) and keys that agree in their low 32 bits.
    const keys = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? 40976560000 + i : i * 4294967296 + 7));
    keys.forEach((key, i) => assert.equal(index.slotOf(key), i));
    keys.forEach((key, i) => assert.equal(index.slotOf(key), i));
    keys.forEach((key, i) => assert.equal(index.find(key), i));
    assert.equal(index.size, keys.length);
    assert.equal(index.find(1), -1);
    assert.equal(index.find(2 ** 53), -1);
  });

  it("starts numbering from 0 again when cleared", () => {
    const index = new NumberIndex();
    [5, 9, 5].forEach((key) => index.slotOf(key));
    index.clear();
    assert.equal(index.find(5), -1);
    assert.equal(index.slotOf(9), 0);
    assert.equal(index.size, 1);
  });
});
