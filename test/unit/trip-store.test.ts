import { collect } from "../helpers/collect.js";
import { beforeEach, afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  columnsToTrips,
  concatColumns,
  selectTrips,
  TripColumnsBuilder,
  tripRange,
  tripsToColumns,
} from "../../src/engine/trips/columns.js";
import { encodeChunk } from "../../src/engine/trips/chunk-format.js";
import { PreparedTrips } from "../../src/engine/trips/prepared-append.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { MAX_CHUNK_TRIPS, mergeableRuns } from "../../src/store/trip-chunks.js";
import type { AppendResult } from "../../src/app/ports/store.js";
import { twoSegmentTrip as trip } from "../helpers/two-segment-trip.js";

const allTrips = async (store: SqliteStore, country: string, opts = {}) =>
  (await collect(store.trips.scan(country, opts))).flatMap(columnsToTrips);

describe("trip columns", () => {
  it("round-trip trips with purpose, income band and empty paths", () => {
    const trips = [
      trip("a", "2026-01-05T08:00:00Z", "bicycle", { purpose: "hbw", incomeBand: 3 }),
      { ...trip("b", "2026-01-05T09:00:00Z"), path: [] },
      trip("a", "2026-01-06T08:00:00Z"),
    ];
    const cols = tripsToColumns(trips);
    assert.deepEqual(cols.devices, ["a", "b"]);
    assert.deepEqual([...cols.pathStart], [0, 2, 2, 4]);
    assert.deepEqual(columnsToTrips(cols), trips);
  });

  it("select a subset of trips with their paths", () => {
    const trips = [
      trip("a", "2026-01-05T08:00:00Z", "bicycle", { purpose: "hbw", incomeBand: 3 }),
      { ...trip("b", "2026-01-05T09:00:00Z"), path: [] },
      trip("c", "2026-01-06T08:00:00Z"),
    ];
    const cols = selectTrips(tripsToColumns(trips), (i) => i !== 0);
    assert.equal(cols.count, 2);
    assert.deepEqual([...cols.pathStart], [0, 0, 2]);
    assert.deepEqual(columnsToTrips(cols), trips.slice(1));
  });

  it("select runs long and short of trips, with paths of every length", () => {
    const trips = Array.from({ length: 200 }, (_, i) => {
      const made = trip(`d${i % 9}`, new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), "personal", {
        purpose: "hbo",
      });
      const path = Array.from({ length: (i * 7) % 40 }, (_, k) => ({
        ...made.path[k % 2],
        segmentId: i * 100 + k,
      }));
      return { ...made, path };
    });
    // Single trips, runs of 3 and a run of 100: copied element by element and in one piece.
    const keep = (i: number) => (i < 50 ? i % 2 === 0 : i < 80 ? i % 4 !== 0 : i >= 100);
    const cols = selectTrips(tripsToColumns(trips), keep);
    assert.deepEqual(
      columnsToTrips(cols),
      trips.filter((_, i) => keep(i)),
    );
  });
});

describe("trip columns joined", () => {
  it("are the columns of all their trips packed at once, devices numbered across the parts", () => {
    const trips = Array.from({ length: 40 }, (_, i) => {
      const start = new Date(Date.UTC(2026, 0, 1 + (i % 28), i % 24)).toISOString();
      const extra = i % 3 === 0 ? { purpose: "hbo", incomeBand: i % 4 } : {};
      const made = trip(`d${(i * 7) % 5}`, start, "bicycle", extra);
      return { ...made, path: made.path.slice(0, i % 3) };
    });
    // The last part keeps the device list of the whole chunk it was selected from, devices its trips never name.
    const parts = [
      tripsToColumns(trips.slice(0, 13)),
      tripsToColumns(trips.slice(13, 13)),
      tripsToColumns(trips.slice(13, 30)),
      selectTrips(tripsToColumns(trips), (i) => i >= 30),
    ];
    const joined = concatColumns(parts);
    assert.deepEqual(joined.devices, tripsToColumns(trips).devices);
    assert.deepEqual(encodeChunk(joined), encodeChunk(tripsToColumns(trips)));
    assert.deepEqual(columnsToTrips(joined), trips);
  });

  it("cut into ranges, are the columns of each range's trips packed at once", () => {
    const trips = Array.from({ length: 30 }, (_, i) => {
      const made = trip(`d${(i * 7) % 5}`, new Date(Date.UTC(2026, 0, 1, i)).toISOString());
      return { ...made, path: made.path.slice(0, i % 3) };
    });
    const whole = tripsToColumns(trips);
    for (const [from, to] of [
      [0, 30],
      [0, 11],
      [11, 12],
      [12, 30],
      [29, 60],
      [5, 5],
    ]) {
      const range = tripRange(whole, from, to);
      assert.deepEqual(range.devices, tripsToColumns(trips.slice(from, to)).devices);
      assert.deepEqual(encodeChunk(range), encodeChunk(tripsToColumns(trips.slice(from, to))));
    }
  });
});

describe("trip columns built one trip at a time", () => {
  it("encode to the bytes of the same trips packed at once, across growth", () => {
    const trips = Array.from({ length: 150 }, (_, i) =>
      trip(`d${i % 7}`, new Date(Date.UTC(2026, 0, 1 + (i % 28), i % 24)).toISOString(), "personal", {
        path: Array.from({ length: i % 90 }, (_, k) => ({
          segmentId: k,
          forward: k % 2 === 0,
          enterT: k * 1000.4,
          exitT: k * 1000.4 + 999.6,
        })),
      }),
    );
    const builder = new TripColumnsBuilder(1, 1);
    trips.forEach((t) => builder.add(t));
    assert.deepEqual(encodeChunk(builder.columns()), encodeChunk(tripsToColumns(trips)));
    assert.deepEqual(builder.columns().devices, tripsToColumns(trips).devices);
  });
});

/** Every stored row of the trip tables, in key order (ids left out). */
function tripRows(store: SqliteStore) {
  return [
    "trip_chunks",
    "trip_fingerprints",
    "trip_day_counts",
    "trip_device_days",
    "trip_device_months",
  ].map((table) => {
    const columns = (store.db.prepare(`SELECT * FROM ${table}`).columns() as { name: string }[])
      .map((c) => c.name)
      .filter((name) => name !== "id");
    return store.db
      .prepare(`SELECT ${columns.join(", ")} FROM ${table} ORDER BY ${columns.join(", ")}`)
      .all();
  });
}

describe("SqliteTrips append with work prepared ahead", () => {
  const batch = [
    trip("a", "2026-01-31T23:30:00Z", "bicycle", { purpose: "hbw", incomeBand: 3 }),
    trip("b", "2026-02-01T08:00:00Z"),
    trip("a", "2026-02-02T08:00:00Z"),
    trip("c", "2026-01-05T08:00:00Z", "pedestrian"),
  ];
  const prepared = (trips: MatchedTrip[]) => {
    const p = new PreparedTrips();
    trips.forEach((t) => p.add(t));
    return p;
  };

  // More trips in a month than one chunk holds: the prepared columns are cut as the trips would be.
  const big = Array.from({ length: MAX_CHUNK_TRIPS + 2 }, (_, i) =>
    trip(`d${i % 13}`, new Date(Date.UTC(2026, 2, 1, 0, i)).toISOString()),
  );
  for (const [name, trips, before] of [
    ["all trips new", batch, []],
    ["some stored before", batch, [batch[1], batch[3]]],
    ["more trips than a chunk holds", [...batch, ...big], []],
  ] as const)
    it(`stores what a plain append stores: ${name}`, async () => {
      const plain = new SqliteStore(":memory:");
      const ahead = new SqliteStore(":memory:");
      try {
        for (const store of [plain, ahead]) await store.trips.appendTrips("de", [...before]);
        const a = await plain.trips.appendTrips("de", trips);
        const work = prepared([...trips]);
        const b = await ahead.trips.appendTrips("de", work.trips, work);
        // The stand-ins read their path through a getter: compared as plain trips.
        const plainTrips = (r: AppendResult) => r.stored.map((t) => ({ ...t, path: t.path }));
        assert.deepEqual([b.inserted, b.duplicates], [a.inserted, a.duplicates]);
        assert.deepEqual(plainTrips(b), plainTrips(a));
        assert.deepEqual(tripRows(ahead), tripRows(plain));
      } finally {
        await plain.close();
        await ahead.close();
      }
    });

  it("ignores work prepared for other trips", async () => {
    const plain = new SqliteStore(":memory:");
    const ahead = new SqliteStore(":memory:");
    try {
      await plain.trips.appendTrips("de", batch.slice(1));
      await ahead.trips.appendTrips("de", batch.slice(1), prepared(batch));
      assert.deepEqual(tripRows(ahead), tripRows(plain));
    } finally {
      await plain.close();
      await ahead.close();
    }
  });
});

describe("SqliteTrips", () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(":memory:");
  });
  afterEach(() => store.close());

  it("gives back exactly what was appended, in month order, per country", async () => {
    const feb = trip("a", "2026-02-01T00:30:00Z", "pedestrian", { purpose: "wbo", incomeBand: 0 });
    const jan = [trip("a", "2026-01-31T23:30:00Z"), trip("b", "2026-01-05T08:00:00Z", "bicycle")];
    assert.deepEqual(await store.trips.appendTrips("de", [feb, ...jan]), {
      inserted: 3,
      stored: [feb, ...jan],
      duplicates: 0,
    });
    await store.trips.appendTrips("at", [trip("z", "2026-01-05T08:00:00Z")]);
    assert.deepEqual(await allTrips(store, "de"), [...jan, feb]);
    assert.equal(await store.trips.countTrips("de"), 3);
    assert.equal(await store.trips.countTrips("at"), 1);
    assert.equal(await store.trips.countTrips("fr"), 0);
  });

  it("skips trips already stored, also within one batch", async () => {
    const a = trip("a", "2026-01-05T08:00:00Z");
    assert.deepEqual(await store.trips.appendTrips("de", [a, a]), {
      inserted: 1,
      stored: [a],
      duplicates: 1,
    });
    const b = trip("b", "2026-01-05T08:00:00Z");
    assert.deepEqual(await store.trips.appendTrips("de", [a, b]), {
      inserted: 1,
      stored: [b],
      duplicates: 1,
    });
    const viaTelematics = { ...a, source: "telematics" as const };
    assert.deepEqual(await store.trips.appendTrips("de", [viaTelematics]), {
      inserted: 1,
      stored: [viaTelematics],
      duplicates: 0,
    });
    assert.equal(await store.trips.countTrips("de"), 3);
    assert.deepEqual(await store.trips.appendTrips("at", [a]), { inserted: 1, stored: [a], duplicates: 0 });
  });

  it("partitions by month of start and filters scans by month range and vehicle class", async () => {
    await store.trips.appendTrips("de", [
      trip("a", "2025-12-31T23:59:59Z"),
      trip("a", "2026-01-10T08:00:00Z", "bicycle"),
      trip("b", "2026-01-11T08:00:00Z"),
      trip("c", "2026-03-01T00:00:00Z", "heavy_commercial"),
    ]);
    const chunks = await collect(store.trips.scan("de"));
    assert.deepEqual(
      chunks.map((c) => c.count),
      [1, 2, 1],
    );
    const starts = async (opts: object) =>
      (await allTrips(store, "de", opts)).map((t) => new Date(t.startT).toISOString());
    assert.deepEqual(
      await starts({ fromMonth: { year: 2026, month: 1 }, toMonth: { year: 2026, month: 2 } }),
      ["2026-01-10T08:00:00.000Z", "2026-01-11T08:00:00.000Z"],
    );
    assert.deepEqual(await starts({ vehicleClasses: ["personal", "heavy_commercial"] }), [
      "2025-12-31T23:59:59.000Z",
      "2026-01-11T08:00:00.000Z",
      "2026-03-01T00:00:00.000Z",
    ]);
    assert.deepEqual(await starts({ vehicleClasses: ["pedestrian"] }), []);
  });

  it("keeps per-day trip and distinct-device tallies behind monthsWithTrips", async () => {
    await store.trips.appendTrips("de", [
      trip("a", "2026-01-05T08:00:00Z"),
      trip("a", "2026-01-05T12:00:00Z"),
      trip("b", "2026-01-05T13:00:00Z"),
      trip("c", "2026-03-02T13:00:00Z", "bicycle"),
    ]);
    // A later batch: device a again on the same day adds a trip but no device.
    await store.trips.appendTrips("de", [
      trip("a", "2026-01-05T18:00:00Z"),
      trip("a", "2026-01-05T08:00:00Z"),
    ]);
    const rows = store.db
      .prepare("SELECT day, vehicle_class, source, trips, devices FROM trip_day_counts ORDER BY day")
      .all();
    assert.deepEqual(rows, [
      { day: "2026-01-05", vehicle_class: "personal", source: "lbs", trips: 4, devices: 2 },
      { day: "2026-03-02", vehicle_class: "bicycle", source: "lbs", trips: 1, devices: 1 },
    ]);
    assert.deepEqual(await store.tripStats.monthsWithTrips("de", ["personal"]), [{ year: 2026, month: 1 }]);
    assert.deepEqual(await store.tripStats.monthsWithTrips("de", ["personal", "bicycle"]), [
      { year: 2026, month: 1 },
      { year: 2026, month: 3 },
    ]);
  });

  it("compacts the small chunks of each settled month into one without changing the trips", async () => {
    const jan = ["a", "b", "c"].map((d) => trip(d, "2026-01-05T08:00:00Z"));
    const mar = trip("d", "2026-03-05T08:00:00Z");
    for (const t of [...jan, mar]) await store.trips.appendTrips("de", [t]);
    await store.trips.appendTrips("at", [trip("a", "2026-01-06T08:00:00Z")]);
    await store.trips.appendTrips("at", [trip("b", "2026-01-06T08:00:00Z")]);
    const before = await allTrips(store, "de");
    assert.deepEqual(await store.trips.compact("de"), { chunksBefore: 4, chunksAfter: 2 });
    assert.deepEqual(
      (await collect(store.trips.scan("de"))).map((c) => c.count),
      [3, 1],
    );
    assert.deepEqual(await allTrips(store, "de"), before);
    assert.deepEqual(await store.trips.compact("de"), { chunksBefore: 2, chunksAfter: 2 });
    assert.equal((await collect(store.trips.scan("at"))).length, 2);
  });

  it("merges a month in progress only once a run of its chunks is full, a settled month's whatever their size", () => {
    // Daily ingests' chunks: ids in storing order, 1,300 trips each, so 7 fill a chunk and an 8th does not fit.
    const daily = (month: string, firstId: number, days: number) =>
      Array.from({ length: days }, (_, i) => ({ id: firstId + i, month, trip_count: 1_300 }));
    assert.ok(7 * 1_300 <= MAX_CHUNK_TRIPS && 8 * 1_300 > MAX_CHUNK_TRIPS);
    const runs = (...months: ReturnType<typeof daily>[]) =>
      mergeableRuns(months.flat()).map((run) => run.map((c) => c.id));
    // March is the newest month: January is settled, February (the month before) and March are in progress.
    const [jan, feb, mar] = [daily("2026-01", 1, 3), daily("2026-02", 10, 9), daily("2026-03", 20, 2)];
    assert.deepEqual(runs(jan, feb, mar), [
      [1, 2, 3],
      [10, 11, 12, 13, 14, 15, 16],
    ]);
    // With April newest, February is settled: its last two chunks merge too.
    assert.deepEqual(runs(jan, feb, mar, daily("2026-04", 30, 1)), [
      [1, 2, 3],
      [10, 11, 12, 13, 14, 15, 16],
      [17, 18],
    ]);
  });

  it("records ingest runs", async () => {
    const run = {
      country: "de",
      source: "lbs",
      path: "/data/t.csv",
      sizeBytes: 123,
      sha256: "ab".repeat(32),
      startedAt: "2026-01-05T08:00:00.000Z",
      finishedAt: "2026-01-05T08:01:00.000Z",
      counts: { pointsRead: 10, trips: 1 },
    };
    await store.trips.recordIngestRun(run);
    assert.deepEqual(await store.trips.listIngestRuns("de"), [run]);
    assert.deepEqual(await store.trips.listIngestRuns("at"), []);
    assert.equal((await store.trips.listIngestRuns()).length, 1);
  });
});
