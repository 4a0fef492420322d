import { collect } from "../helpers/collect.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { decodeChunk, encodeChunk } from "../../src/engine/trips/chunk-format.js";
import {
  CODE_TABLE_VERSION,
  SEGMENT_COUNT_CLASSES,
  StoredFormatError,
  TRACE_SOURCE_CODES,
  TRIP_PURPOSE_CODES,
  VEHICLE_CLASS_CODES,
} from "../../src/engine/trips/codes.js";
import { columnsToTrips, tripsToColumns } from "../../src/engine/trips/columns.js";
import {
  TRACE_SOURCES,
  TRIP_PURPOSES,
  VEHICLE_CLASSES,
  type MatchedTrip,
} from "../../src/engine/trips/types.js";
import { SqliteSegmentStats } from "../../src/store/sqlite/counts.js";
import { migrate } from "../../src/store/sqlite/migrations.js";
import { SegmentMonthCounters } from "../../src/store/sqlite/segment-month-pack.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { SPEED_BINS, type SegmentStatCell } from "../../src/engine/counts/segment-stats.js";
import { type SegmentStatsQuery } from "../../src/app/ports/store.js";

/**
 * The stored layouts, pinned byte for byte. These tests change only when a format or code table
 * is added, never when one is edited: stored data keeps what it meant when it was written.
 */

/** Code table 1, as stores already hold it. Later tables may only add names with new codes. */
const CODE_TABLE_1 = {
  vehicleClass: {
    personal: 0,
    medium_commercial: 1,
    heavy_commercial: 2,
    bicycle: 3,
    pedestrian: 4,
    bus: 5,
    rail: 6,
  },
  source: { lbs: 0, telematics: 1 },
  purpose: { hbw: 0, hbo: 1, nhbw: 2, wbo: 3 },
};

const T0 = Date.UTC(2025, 0, 6, 8, 0);
const TRIPS: MatchedTrip[] = [
  {
    deviceId: "dev-a",
    vehicleClass: "personal",
    source: "lbs",
    origin: [7.42, 43.73],
    destination: [7.43, 43.74],
    startT: T0,
    endT: T0 + 300_000,
    lengthM: 1234.5,
    path: [
      { segmentId: 11, forward: true, enterT: T0, exitT: T0 + 120_000 },
      { segmentId: 12, forward: false, enterT: T0 + 120_000, exitT: T0 + 300_000 },
    ],
    purpose: "hbo",
    incomeBand: 3,
  },
  {
    deviceId: "dev-b",
    vehicleClass: "bus",
    source: "telematics",
    origin: [7.41, 43.72],
    destination: [7.44, 43.75],
    startT: T0 + 60_000,
    endT: T0 + 200_000,
    lengthM: 800,
    path: [{ segmentId: 2 ** 40 + 5, forward: true, enterT: T0 + 60_000, exitT: T0 + 200_000 }],
  },
];

/** TRIPS' columns as the first release stored them (chunk format 1: columns only, code table 1). */
const CHUNK_COLUMNS_V1 =
  "0000C00BAA4379420000661AAA4379420000FE54AA4379420000943CAA437942AE47E17A14AE1D40A4703D0AD7A31D40" +
  "3D0AD7A370DD45405C8FC2F528DC4540B81E85EB51B81D40C3F5285C8FC21D401F85EB51B8DE45400000000000E04540" +
  "00509A44000048440005000000000000000100000000000001FF00000000000003FF0000000000000000000001000000" +
  "00000000020000000300000000000000000000000000264000000000000028400050000000007042010001000000" +
  "000000000000C0D401000000000000000000C0D40100E0930400E022020000000000";
/** Format 2's header for them: "SFTC", format 2 | code table 1 << 16, 2 trips, 3 path steps. */
const CHUNK_HEADER_V2 = "53465443" + "02000100" + "02000000" + "03000000";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex").toUpperCase();
const envelope = (format: number) => ({ format, tripCount: 2, stepCount: 3, devices: ["dev-a", "dev-b"] });

describe("stored code tables", () => {
  it("are table 1 exactly: codes stores hold never change", () => {
    assert.equal(CODE_TABLE_VERSION, 1, "a new table adds names; pin it here as CODE_TABLE_2");
    assert.deepEqual(
      { vehicleClass: VEHICLE_CLASS_CODES, source: TRACE_SOURCE_CODES, purpose: TRIP_PURPOSE_CODES },
      CODE_TABLE_1,
    );
  });

  it("give every name a distinct code, and classes fit a chunk's 31-bit class mask", () => {
    for (const [names, codes] of [
      [VEHICLE_CLASSES, VEHICLE_CLASS_CODES],
      [TRACE_SOURCES, TRACE_SOURCE_CODES],
      [TRIP_PURPOSES, TRIP_PURPOSE_CODES],
    ] as [readonly string[], Record<string, number>][]) {
      assert.deepEqual(Object.keys(codes).sort(), [...names].sort());
      assert.equal(new Set(Object.values(codes)).size, names.length);
    }
    assert.ok(Object.values(VEHICLE_CLASS_CODES).every((c) => c >= 0 && c < 31));
  });
});

describe("trip chunk format", () => {
  it("writes format 2: a header naming format, code table and counts, then the format-1 columns", () => {
    assert.equal(hex(encodeChunk(tripsToColumns(TRIPS))), CHUNK_HEADER_V2 + CHUNK_COLUMNS_V1);
  });

  it("reads both formats back to the same trips", () => {
    const v1 = decodeChunk(Buffer.from(CHUNK_COLUMNS_V1, "hex"), envelope(1));
    const v2 = decodeChunk(Buffer.from(CHUNK_HEADER_V2 + CHUNK_COLUMNS_V1, "hex"), envelope(2));
    assert.deepEqual(columnsToTrips(v1), TRIPS);
    assert.deepEqual(columnsToTrips(v2), TRIPS);
  });

  it("refuses an unknown format, a newer code table and a header that disagrees with its row", () => {
    const v2 = (header: string) => Buffer.from(header + CHUNK_COLUMNS_V1, "hex");
    const refused = (blob: Uint8Array, format: number, message: RegExp) =>
      assert.throws(
        () => decodeChunk(blob, envelope(format)),
        (e: Error) => {
          assert.ok(e instanceof StoredFormatError, String(e));
          assert.match(e.message, message);
          return true;
        },
      );
    refused(v2(CHUNK_HEADER_V2), 3, /format 3 is not supported/);
    refused(v2("53465443" + "02000200" + "0200000003000000"), 2, /code table 2.*knows tables up to 1/);
    refused(v2("53465443" + "02000100" + "0300000003000000"), 2, /holds 3 trips/);
    refused(v2("43544653" + "02000100" + "0200000003000000"), 2, /other byte order/);
    refused(Buffer.from(CHUNK_COLUMNS_V1, "hex"), 2, /without its header/);
    refused(Buffer.from(CHUNK_COLUMNS_V1.slice(0, 64), "hex"), 1, /shorter/);
  });

  it("a store made by the first release still reads: format-1 rows and new rows side by side", async () => {
    const store = new SqliteStore(":memory:");
    store.db
      .prepare(
        `INSERT INTO trip_chunks (country, month, format, trip_count, step_count, class_mask, devices, columns)
         VALUES ('mc', '2025-01', 1, 2, 3, 33, '["dev-a","dev-b"]', ?)`,
      )
      .run(Buffer.from(CHUNK_COLUMNS_V1, "hex"));
    const later = TRIPS.map((t) => ({ ...t, deviceId: `${t.deviceId}-2`, startT: t.startT + 1 }));
    await store.trips.appendTrips("mc", later);
    const formats = store.db.prepare("SELECT format FROM trip_chunks ORDER BY id").pluck().all();
    assert.deepEqual(formats, [1, 2]);
    const scanned = (await collect(store.trips.scan("mc"))).flatMap(columnsToTrips);
    assert.deepEqual(scanned, [...TRIPS, ...later]);
    assert.deepEqual(
      (await collect(store.trips.scan("mc", { vehicleClasses: ["bus"] }))).flatMap(columnsToTrips),
      [TRIPS[1], later[1]],
    );
    await store.close();
  });
});

describe("packed segment-month format", () => {
  const CELLS: SegmentStatCell[] = [
    {
      segmentId: 11,
      month: "2025-01",
      dayOfWeek: 1,
      hour: 8,
      direction: "with",
      vehicleClass: "personal",
      source: "lbs",
      trips: 3,
      speedSumKph: 101.25,
      speedCount: 2,
      speedHistogram: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
      purposes: { hbo: 2, wbo: 1 },
      incomes: { "3": 3 },
    },
    {
      segmentId: 11,
      month: "2025-01",
      dayOfWeek: 7,
      hour: 23,
      direction: "against",
      vehicleClass: "bicycle",
      source: "telematics",
      trips: 1,
      speedSumKph: 15.5,
      speedCount: 1,
      speedHistogram: [0, 0, 0, 1],
      purposes: {},
      incomes: {},
    },
  ];
  // Cells 178 (Monday 08h, with, personal, lbs) and 3341 (Sunday 23h, against, bicycle, telematics):
  // the slot tables of segment-month-pack.ts. Details keys are cell << 8 | counter (speed bin,
  // 64 + purpose code, 128 + income band).
  // Header: entries (uint32), then format 1 as a uint32, or format 2 and code table 1 as uint16s.
  const [V1, V2] = ["01000000", "02000100"];
  const totals = (format: string) =>
    "02000000" +
    format +
    ["0000000000505940", "0000000000002f40", "0300000001000000", "0200000001000000", "b2000d0d"].join("");
  const details = (format: string) =>
    "05000000" +
    format +
    ["0ab2000041b2000043b2000083b20000030d0d00", "0200000002000000010000000300000001000000"].join("");

  it("writes format 2: format and code table in the header, the cell layout of format 1", () => {
    const counters = new SegmentMonthCounters();
    CELLS.forEach((c) => counters.add(c));
    const packed = counters.encode();
    assert.equal(packed.totals.toString("hex"), totals(V2));
    assert.equal(packed.details.toString("hex"), details(V2));
  });

  const everything: SegmentStatsQuery = {
    country: "li",
    segmentIds: [11],
    months: ["2025-01"],
    daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
    hours: Array.from({ length: 24 }, (_, h) => h),
    directions: ["with", "against"],
    vehicleClasses: SEGMENT_COUNT_CLASSES,
    sources: TRACE_SOURCES,
  };

  /** A migrated database holding one segment-month as the given BLOBs. */
  function storedAs(totalsHex: string, detailsHex: string): SqliteSegmentStats {
    const db = new Database(":memory:");
    migrate(db);
    for (const [table, blob] of [
      ["segment_month_totals", totalsHex],
      ["segment_month_details", detailsHex],
    ])
      db.prepare(
        `INSERT INTO ${table} (country, segment_id, month, cells) VALUES ('li', 11, '2025-01', ?)`,
      ).run(Buffer.from(blob, "hex"));
    return new SqliteSegmentStats(db);
  }

  it("a store made by the first release still reads, and adding to it writes format 2", () => {
    const want = {
      segmentId: 11,
      month: "2025-01",
      trips: 4,
      speedSumKph: 116.75,
      speedCount: 3,
      speedHistogram: Array.from({ length: SPEED_BINS }, (_, bin) => (bin === 3 ? 1 : bin === 10 ? 2 : 0)),
      purposes: { hbo: 2, wbo: 1 },
      incomes: { "3": 3 },
    };
    const first = storedAs(totals(V1), details(V1));
    assert.deepEqual(first.query(everything), [want]);
    assert.deepEqual(storedAs(totals(V2), details(V2)).query(everything), [want]);
    first.add("li", [{ ...CELLS[1], trips: 2, speedCount: 0, speedSumKph: 0, speedHistogram: [] }]);
    assert.deepEqual(first.query(everything), [{ ...want, trips: 6 }]);
  });

  it("refuses an unknown format or a newer code table", () => {
    for (const [header, message] of [
      ["03000100", /format 3 \(this version reads 1 to 2\)/],
      ["02000200", /code table 2.*knows tables up to 1/],
      ["02000000", /code table 0, which never existed/],
    ] as const)
      assert.throws(
        () => storedAs(totals(header), details(V2)).query(everything),
        (e: Error) => e instanceof StoredFormatError && message.test(e.message),
        header,
      );
  });
});
