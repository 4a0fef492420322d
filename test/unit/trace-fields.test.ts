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

  it("reads the first time of an hour by its digits as Date.parse reads it, and odd ones in full", () => {
    let state = 11;
    const next = (n: number) => (state = (state * 1103515245 + 12345) % 2147483648) % n;
    const pad = (v: number, n: number) => String(v).padStart(n, "0");
    for (let i = 0; i < 5000; i++) {
      // Each a new hour, so none is read within the hour of the one before.
      const [y, mo, d] = [1960 + next(120), 1 + next(13), next(33)];
      const time = `${pad(next(25), 2)}:${pad(next(61), 2)}:${pad(next(61), 2)}.${pad(next(1000), 3)}Z`;
      const row = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${time}`;
      const expected = Date.parse(row);
      assert.equal(
        parseTimestamp(row),
        Number.isNaN(expected) ? `timestamp "${row}" is not a valid date` : expected,
        row,
      );
    }
  });

  it("rejects minutes and seconds past 59 in the hour of the one before, as in full", () => {
    assert.equal(parseTimestamp("2025-03-01T06:02:11.000Z"), Date.parse("2025-03-01T06:02:11.000Z"));
    assert.match(String(parseTimestamp("2025-03-01T06:60:00.000Z")), /not a valid date/);
    assert.match(String(parseTimestamp("2025-03-01T06:59:60.000Z")), /not a valid date/);
    assert.match(String(parseTimestamp("2025-03-01T06:5x:00.000Z")), /not ISO-8601/);
  });
});
