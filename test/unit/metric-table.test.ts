import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { sliceRows, tableJson, tableOfRows } from "../../src/engine/counts/metric-table.js";

describe("metric tables (counts answers as columns)", () => {
  const rows = [
    [1, "2025-01-01", 2.5, null, { hbw: 0.5 }, "primary", NaN],
    [2, "2025-02-01", -0, 3, null, "primary", 1],
    [3, "2025-01-01", 1e21, 0.1 + 0.2, { wbo: 1 }, "residential", Infinity],
  ];

  it("writes rows as JSON text byte for byte as JSON.stringify does", () => {
    const table = tableOfRows(rows, 7);
    assert.deepEqual(
      table.columns.map((c) => c.kind),
      ["number", "text", "number", "number", "any", "text", "any"],
    );
    assert.equal(tableJson(table), JSON.stringify(rows));
    assert.equal(tableJson(table, 1, 3), JSON.stringify(rows.slice(1, 3)));
    assert.equal(tableJson(table, 3, 3), "[]");
    assert.equal(tableJson(tableOfRows([], 2)), "[]");
  });

  it("gives back a slice's rows as JSON would read them", () => {
    const table = tableOfRows(rows, 7);
    assert.deepEqual(
      JSON.parse(JSON.stringify(sliceRows({ table, from: 1, to: 3 }))),
      JSON.parse(JSON.stringify(rows.slice(1))),
    );
  });
});
