import { describe, it } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { decodeResultPage, encodeResultPage } from "../../src/store/result-pages.js";
import { SqliteCountsResults } from "../../src/store/sqlite/counts.js";
import { migrate } from "../../src/store/sqlite/migrations.js";

/** What the pages read back before the column BLOBs: the rows through JSON text. */
const viaJson = (rows: unknown[][]) => JSON.parse(JSON.stringify(rows)) as unknown[][];

const roundTrip = (rows: unknown[][]) => {
  const blob = encodeResultPage(rows);
  // SQLite hands BLOBs back at any offset: decode from an unaligned copy too.
  const unaligned = new Uint8Array(blob.length + 1).subarray(1);
  unaligned.set(blob);
  assert.deepStrictEqual(decodeResultPage(unaligned), decodeResultPage(blob));
  return decodeResultPage(blob);
};

describe("counts result pages as column BLOBs", () => {
  it("read back as the rows through JSON, whatever the columns hold", () => {
    const pages: unknown[][][] = [
      [],
      [[1, "2025-01-01", 12, 3, 1.25, null]],
      [
        [4_294_967_296, "2025-01-01", -0, 2 ** 31, 7.5, 61.3, { hbo: 0.5, hbw: 0.5 }, "motorway"],
        [-5, "2025-02-01", 0, -(2 ** 31), NaN, Infinity, null, "primary"],
        [12_345_678_901_234, "2025-01-01", 3, 4, -Infinity, 1e-300, { hbo: 1 }, "motorway"],
      ],
      // mixed columns: numbers and strings, strings and null
      [
        [1, "a", null],
        ["1", null, 2],
      ],
      // rows of unequal length
      [[1, 2], [3], [undefined, () => 1, "x"]],
    ];
    for (const rows of pages) assert.deepStrictEqual(roundTrip(rows), viaJson(rows));
  });

  it("a year's page of 1,000 rows is smaller than its JSON text", () => {
    const rows = Array.from({ length: 1000 }, (_, i) => [
      1_000_000 + i,
      `2025-${String((i % 12) + 1).padStart(2, "0")}-01`,
      i * 3,
      i,
      i * 1.37,
      i % 7 === 0 ? null : 30 + (i % 10) / 10,
    ]);
    assert.deepStrictEqual(roundTrip(rows), viaJson(rows));
    assert.ok(encodeResultPage(rows).length < Buffer.byteLength(JSON.stringify(rows)));
  });

  it("the SQLite store serves pages saved as BLOBs and pages saved before them as JSON text", () => {
    const db = new Database(":memory:");
    migrate(db);
    const results = new SqliteCountsResults(db);
    const at = "2026-01-01T00:00:00.000Z";
    const result = {
      requestId: "r1",
      orgId: "o1",
      kind: "metrics" as const,
      columns: ["segment_id", "year_month", "avg_speed"],
      extra: {},
      pageSize: 2,
      totalRows: 3,
      createdAt: at,
      expiresAt: "2026-01-02T00:00:00.000Z",
    };
    const pages = [
      [
        [1, "2025-01-01", 42.5],
        [2, "2025-01-01", null],
      ],
      [[3, "2025-02-01", 40]],
    ];
    results.save(result, pages, at);
    assert.deepStrictEqual(results.page("r1", 1), pages[0]);
    assert.deepStrictEqual(results.page("r1", 2), pages[1]);
    assert.equal(results.page("r1", 3), null);
    db.prepare("UPDATE counts_result_pages SET rows = ? WHERE request_id = 'r1' AND page = 2").run(
      JSON.stringify(pages[1]),
    );
    assert.deepStrictEqual(results.page("r1", 2), pages[1]);
  });
});
