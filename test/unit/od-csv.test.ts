import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { toCsv } from "../../src/engine/analysis/csv.js";
import { OD_COLUMNS, odCsv, odIdentity, type OdLabels } from "../../src/engine/analysis/od-csv.js";
import type { OdRow } from "../../src/engine/analysis/od-aggregate.js";
import type { ZoneDef } from "../../src/engine/zones/compile.js";

const zone = (name: string, id: number | null, direction: number | null = null): ZoneDef => ({
  name,
  id,
  isPass: direction !== null,
  direction,
  isBidi: false,
  kind: "polygon",
});

const labels = (names: string[]): OdLabels => ({
  groups: ["All Vehicles", "Personal"],
  origins: names.map((n, i) => zone(n, i + 1)),
  destinations: names.map((n, i) => zone(n, 100 + i, i % 2 === 0 ? null : 90)),
  dayTypes: ["0: Average Day (M-Su)", "1: Average Weekday (M-F)"],
  dayParts: ["0: All Day (12am-12am)", "1: Peak AM (6am-10am)"],
});

const row = (i: number, traffic: number): OdRow => ({
  group: i % 2,
  origin: i % 3,
  destination: (i * 7) % 3,
  dayType: (i >> 1) % 2,
  dayPart: (i >> 2) % 2,
  odTraffic: traffic,
  originTraffic: i,
  destinationTraffic: i * 1_000_003,
  avgDurationMin: i % 60,
  sample: 1,
});

/** The CSV as every other metric writes it: one array of values per row, each field quoted as needed. */
const reference = (rows: OdRow[], l: OdLabels) =>
  toCsv(
    OD_COLUMNS,
    rows.map((r) => [
      ...odIdentity(r, l),
      r.odTraffic,
      r.originTraffic,
      r.destinationTraffic,
      r.avgDurationMin,
    ]),
  );

describe("od_* CSV writer", () => {
  it("writes what toCsv writes: quoted labels, non-ASCII names, any number", () => {
    const l = labels(['Zürich "Süd", Bahnhof', "Cell 2", "東京"]);
    const numbers = [0, -0, 7, 4095, 4096, 123_456_789_012, 2 ** 53, 1.5, -3, 1e21, NaN];
    const rows = numbers.map((n, i) => row(i, n));
    assert.equal(odCsv(rows, l), reference(rows, l));
  });

  it("stays whole across its blocks of bytes, in ASCII and in UTF-8", () => {
    for (const names of [
      ["Cell 1", "Cell 2", "Cell 3"],
      ["Zone é", "Zone ß", "Zone ✓"],
    ]) {
      const l = labels(names);
      // ~120 bytes a row: several 1 MB blocks.
      const rows = Array.from({ length: 30_000 }, (_, i) => row(i, i * 13));
      assert.equal(odCsv(rows, l), reference(rows, l));
    }
  });
});
