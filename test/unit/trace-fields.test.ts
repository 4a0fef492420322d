import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseTimestamp } from "../../src/engine/ingest/fields.js";

describe("trace timestamps", () => {
  it("read within the hour of the one before as in full, and in full when they leave it or break its shape", () => {
    const rows = [
      "2025-03-01T06:02:11.000Z",
      "2025-03-01T06:03:09.749Z",
      "2025-03-01T06:59:59.999Z",
      "2025-03-01T07:00:00.000Z",
      "2025-03-01T07:00:00.000+01:00",
      "2025-03-01T07:41:07.010Z",
      "2024-02-29T23:59:59.999Z",
      "2024-02-29T23:00:00.001Z",
    ];
    for (const row of rows) assert.equal(parseTimestamp(row), Date.parse(row), row);
  });

  it("rejects minutes and seconds past 59 in the hour of the one before, as in full", () => {
    assert.equal(parseTimestamp("2025-03-01T06:02:11.000Z"), Date.parse("2025-03-01T06:02:11.000Z"));
    assert.match(String(parseTimestamp("2025-03-01T06:60:00.000Z")), /not a valid date/);
    assert.match(String(parseTimestamp("2025-03-01T06:59:60.000Z")), /not a valid date/);
    assert.match(String(parseTimestamp("2025-03-01T06:5x:00.000Z")), /not ISO-8601/);
  });
});
