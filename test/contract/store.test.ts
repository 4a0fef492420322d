import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { columnsToTrips, type TripColumns } from "../../src/engine/trips/columns.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import { SEGMENT_COUNT_CLASSES } from "../../src/engine/trips/codes.js";
import { TRACE_SOURCES } from "../../src/engine/trips/types.js";
import type { AnalysisSpec } from "../../src/domain/analyses/spec.js";
import { DomainError } from "../../src/domain/errors.js";
import { toDomainError } from "../../src/app/error-mapping.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { EXPIRED_RESULTS_PER_SAVE } from "../../src/store/result-pages.js";
import type { Store } from "../../src/app/ports/store.js";
import type { StoredZoneSet } from "../../src/domain/records.js";
import { backends } from "./backends.js";
import { randomCells } from "../helpers/random-cells.js";
import { SegmentCellAccumulator } from "../../src/engine/counts/segment-cells.js";
import { tableOfRows } from "../../src/engine/counts/metric-table.js";
import { Network } from "../../src/engine/network/network.js";
import { LocalClock } from "../../src/engine/time.js";
import { gridNetwork } from "../helpers/counts.js";
import { randomTrips } from "../helpers/random-trips.js";
import { BIG_SEGMENT_ID, twoSegmentTrip as trip } from "../helpers/two-segment-trip.js";

/** The storage ports' contract, run against every backend: the same calls give the same answers. */
const all = await backends();
after(() => Promise.all(all.map((b) => b.dispose())));

async function chunksOf(store: Store, country: string, opts = {}): Promise<TripColumns[]> {
  const out: TripColumns[] = [];
  for await (const c of store.trips.scan(country, opts)) out.push(c);
  return out;
}
const tripsOf = async (store: Store, country: string, opts = {}) =>
  (await chunksOf(store, country, opts)).flatMap(columnsToTrips);

/** The store refuses in its own terms (NameTakenError); the application's mapping gives the API's code. */
const rejectsWith = (code: string) => (e: unknown) => {
  const mapped = toDomainError(e);
  return mapped instanceof DomainError && mapped.code === code;
};

function zoneSet(orgId: string, name: string): StoredZoneSet {
  return {
    uuid: crypto.randomUUID(),
    orgId,
    name,
    geomType: "polygon",
    withCalibration: false,
    zoneCount: 1,
    createdAt: new Date().toISOString(),
    featureCollection: {
      type: "FeatureCollection",
      features: [
        {
          type: "Feature",
          geometry: {
            type: "Polygon",
            coordinates: [
              [
                [9.5, 47.1],
                [9.6, 47.1],
                [9.6, 47.2],
                [9.5, 47.1],
              ],
            ],
          },
          properties: { id: 1, name: "Vaduz", "z-order": 2 },
        },
      ],
    },
  };
}

const spec = (orgId: string, name: string) =>
  ({ uuid: crypto.randomUUID(), orgId, name, tags: [] }) as unknown as AnalysisSpec;

for (const backend of all) {
  describe(`Store contract: ${backend.name}`, { skip: backend.skip }, () => {
    it("exclusively: callers under one name take turns, other names run beside them", async () => {
      const store = await backend.open();
      const events: string[] = [];
      let releaseFirst = () => {};
      const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
      let firstStarted = () => {};
      const started = new Promise<void>((resolve) => (firstStarted = resolve));
      const first = store.exclusively("set-up", async () => {
        events.push("first in");
        firstStarted();
        await firstHolds;
        events.push("first out");
        return 1;
      });
      await started;
      const second = store.exclusively("set-up", async () => {
        events.push("second in");
        return 2;
      });
      // Another name is not held up by the first caller.
      assert.equal(await store.exclusively("other", async () => "other"), "other");
      events.push("other done");
      releaseFirst();
      assert.deepEqual(await Promise.all([first, second]), [1, 2]);
      assert.deepEqual(events, ["first in", "other done", "first out", "second in"]);
      // A failing caller frees the name for the next.
      await assert.rejects(
        store.exclusively("set-up", async () => Promise.reject(new Error("boom"))),
        /boom/,
      );
      assert.equal(await store.exclusively("set-up", async () => "after"), "after");
    });

    it("trips: gives back exactly what was appended, in month order, per country", async () => {
      const store = await backend.open();
      const feb = trip("a", "2026-02-01T00:30:00Z", "pedestrian", { purpose: "wbo", incomeBand: 0 });
      const jan = [trip("a", "2026-01-31T23:30:00Z"), trip("b", "2026-01-05T08:00:00Z", "bicycle")];
      assert.deepEqual(await store.trips.appendTrips("de", [feb, ...jan]), {
        inserted: 3,
        stored: [feb, ...jan],
        duplicates: 0,
      });
      await store.trips.appendTrips("at", [trip("z", "2026-01-05T08:00:00Z")]);
      assert.deepEqual(await tripsOf(store, "de"), [...jan, feb]);
      assert.equal(await store.trips.countTrips("de"), 3);
      assert.equal(await store.trips.countTrips("at"), 1);
      assert.equal(await store.trips.countTrips("fr"), 0);
    });

    it("trips: lists chunks by month and id, and scans a chunk id range (analysis shards)", async () => {
      const store = await backend.open();
      const jan = [trip("a", "2026-01-05T08:00:00Z"), trip("b", "2026-01-06T08:00:00Z")];
      await store.trips.appendTrips("de", [jan[0], trip("c", "2026-02-01T08:00:00Z")]);
      await store.trips.appendTrips("de", [jan[1]]);
      await store.trips.appendTrips("at", [trip("z", "2026-01-05T08:00:00Z")]);
      const index = await store.trips.chunkIndex("de");
      assert.deepEqual(
        index.map((c) => [c.month, c.tripCount]),
        [
          ["2026-01", 1],
          ["2026-01", 1],
          ["2026-02", 1],
        ],
      );
      assert.ok(index[0].id < index[1].id);
      const january = { fromMonth: { year: 2026, month: 1 }, toMonth: { year: 2026, month: 1 } };
      assert.deepEqual(await store.trips.chunkIndex("de", january), index.slice(0, 2));
      const second = { ...january, chunkIds: { from: index[1].id, to: index[1].id } };
      assert.deepEqual(await tripsOf(store, "de", second), [jan[1]]);
      const both = { ...january, chunkIds: { from: index[0].id, to: index[1].id } };
      assert.deepEqual(await tripsOf(store, "de", both), jan);
    });

    it("trips: skips trips already stored, also within one batch", async () => {
      const store = await backend.open();
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
      assert.deepEqual(await store.trips.appendTrips("at", [a]), { inserted: 1, stored: [a], duplicates: 0 });
      assert.equal(await store.trips.countTrips("de"), 2);
    });

    it("trips: filters scans by month range, vehicle class and source", async () => {
      const store = await backend.open();
      await store.trips.appendTrips("de", [
        trip("a", "2025-12-31T23:59:59Z"),
        trip("a", "2026-01-10T08:00:00Z", "bicycle"),
        { ...trip("b", "2026-01-11T08:00:00Z"), source: "telematics" },
        trip("c", "2026-03-01T00:00:00Z", "heavy_commercial"),
      ]);
      assert.deepEqual(
        (await chunksOf(store, "de")).map((c) => c.count),
        [1, 2, 1],
      );
      const starts = async (opts: object) =>
        (await tripsOf(store, "de", opts)).map((t) => new Date(t.startT).toISOString());
      assert.deepEqual(
        await starts({ fromMonth: { year: 2026, month: 1 }, toMonth: { year: 2026, month: 2 } }),
        ["2026-01-10T08:00:00.000Z", "2026-01-11T08:00:00.000Z"],
      );
      assert.deepEqual(await starts({ vehicleClasses: ["personal", "heavy_commercial"] }), [
        "2025-12-31T23:59:59.000Z",
        "2026-01-11T08:00:00.000Z",
        "2026-03-01T00:00:00.000Z",
      ]);
      assert.deepEqual(await starts({ sources: ["telematics"] }), ["2026-01-11T08:00:00.000Z"]);
      assert.deepEqual(await starts({ vehicleClasses: ["pedestrian"] }), []);
    });

    it("trips: scans more chunks than one fetch holds, in order", async () => {
      const store = await backend.open();
      const days = Array.from(
        { length: 11 },
        (_, i) => `2026-0${1 + (i % 3)}-${String(10 + i).padStart(2, "0")}T08:00:00Z`,
      );
      for (const day of days) await store.trips.appendTrips("de", [trip(`d${day}`, day)]);
      const got = (await tripsOf(store, "de")).map((t) => t.startT);
      assert.deepEqual(
        got,
        [...got].sort((a, b) => a - b),
      );
      assert.equal(got.length, 11);
    });

    it("trips: keeps per-day trip and distinct-device tallies", async () => {
      const store = await backend.open();
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
      assert.deepEqual(
        await store.tripStats.dailyTotals("de", ["personal", "bicycle"], "2026-01-01", "2026-03-31"),
        [
          { day: "2026-01-05", trips: 4, devices: 2 },
          { day: "2026-03-02", trips: 1, devices: 1 },
        ],
      );
      assert.deepEqual(
        await store.tripStats.dailyTotals("de", ["bicycle"], "2026-01-01", "2026-03-31", ["telematics"]),
        [],
      );
      assert.deepEqual(await store.tripStats.monthsWithTrips("de", ["personal"]), [{ year: 2026, month: 1 }]);
      assert.deepEqual(await store.tripStats.monthsWithTrips("de", ["personal", "bicycle"], ["lbs"]), [
        { year: 2026, month: 1 },
        { year: 2026, month: 3 },
      ]);
      assert.deepEqual([...(await store.tripStats.devicesByMonth("de"))].sort(), [
        ["2026-01", 2],
        ["2026-03", 1],
      ]);
      assert.deepEqual(
        [...(await store.tripStats.devicesByMonth("de", { from: "2026-02", to: "2026-03" }))],
        [["2026-03", 1]],
      );
      // A device seen again on another day of a month is still one device of that month.
      await store.trips.appendTrips("de", [
        trip("a", "2026-01-20T08:00:00Z"),
        trip("d", "2026-01-21T08:00:00Z"),
      ]);
      assert.deepEqual(
        [...(await store.tripStats.devicesByMonth("de", { from: "2026-01", to: "2026-01" }))],
        [["2026-01", 3]],
      );
      await store.tripStats.addDayCounts("de", [
        { day: "2026-03-02", vehicleClass: "bicycle", source: "lbs", trips: 2, devices: 1 },
        { day: "2026-03-02", vehicleClass: "bicycle", source: "lbs", trips: 1, devices: 0 },
      ]);
      assert.deepEqual(await store.tripStats.dailyTotals("de", ["bicycle"], "2026-03-02", "2026-03-02"), [
        { day: "2026-03-02", trips: 4, devices: 2 },
      ]);
    });

    it("trips: compacts the small chunks of each settled month without changing the trips", async () => {
      const store = await backend.open();
      const jan = ["a", "b", "c"].map((d) => trip(d, "2026-01-05T08:00:00Z"));
      for (const t of [...jan, trip("d", "2026-03-05T08:00:00Z")]) await store.trips.appendTrips("de", [t]);
      await store.trips.appendTrips("at", [trip("a", "2026-01-06T08:00:00Z")]);
      await store.trips.appendTrips("at", [trip("b", "2026-01-06T08:00:00Z")]);
      const before = await tripsOf(store, "de");
      assert.deepEqual(await store.trips.compact("de"), { chunksBefore: 4, chunksAfter: 2 });
      assert.deepEqual(
        (await chunksOf(store, "de")).map((c) => c.count),
        [3, 1],
      );
      assert.deepEqual(await tripsOf(store, "de"), before);
      assert.deepEqual(await store.trips.compact("de"), { chunksBefore: 2, chunksAfter: 2 });
      assert.equal((await chunksOf(store, "at")).length, 2);
    });

    it("trips: records ingest runs", async () => {
      const store = await backend.open();
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

    it("segment counts: sums the same as the SQLite reference, in batches and per country", async () => {
      const store = await backend.open();
      const reference = new SqliteStore(":memory:");
      const cells = randomCells(new Rng(5, "contract-cells"), 600, {
        segments: [7, 8, BIG_SEGMENT_ID],
        months: ["2025-01", "2025-02"],
        speeds: "exact",
      });
      for (let i = 0; i < cells.length; i += 150) {
        await store.segmentStats.add("li", cells.slice(i, i + 150));
        await reference.segmentStats.add("li", cells.slice(i, i + 150));
      }
      await store.segmentStats.add("zz", cells.slice(0, 50));
      for (const details of [true, false])
        for (const months of [["2025-01"], ["2025-01", "2025-02"], ["2025-03"]]) {
          const q = {
            country: "li",
            segmentIds: [7, 8, BIG_SEGMENT_ID, 99],
            months,
            daysOfWeek: [1, 2, 3, 6],
            hours: [7, 8, 9, 17],
            directions: ["with", "against"] as const,
            vehicleClasses: ["personal", "light_commercial"],
            sources: ["lbs"],
            details,
          };
          assert.deepEqual(await store.segmentStats.query(q), await reference.segmentStats.query(q));
        }
      const some = await store.segmentStats.query({
        country: "li",
        segmentIds: [7],
        months: ["2025-01"],
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        hours: Array.from({ length: 24 }, (_, h) => h),
        directions: ["with", "against"],
        vehicleClasses: [...SEGMENT_COUNT_CLASSES],
        sources: [...TRACE_SOURCES],
      });
      const want = cells
        .filter((c) => c.segmentId === 7 && c.month === "2025-01")
        .reduce((n, c) => n + c.trips, 0);
      assert.equal(some[0].trips, want);
      await reference.close();
    });

    it("segment counts: the sums as columns are the query's rows, from the rollups and from the cells", async () => {
      const store = await backend.open();
      const cells = randomCells(new Rng(9, "contract-columns"), 900, {
        segments: [7, 8, 9, BIG_SEGMENT_ID],
        months: ["2024-12", "2025-01", "2025-02"],
        speeds: "exact",
      });
      await store.segmentStats.add("li", cells);
      const week = [1, 2, 3, 4, 5, 6, 7];
      const day = Array.from({ length: 24 }, (_, h) => h);
      for (const [daysOfWeek, hours] of [
        [week, day], // the rollups
        [
          [1, 2, 3],
          [7, 8, 9],
        ], // the cells
      ])
        for (const months of [["2025-01"], ["2025-02", "2024-12", "2025-01"], ["2025-03"]]) {
          const q = {
            country: "li",
            segmentIds: [BIG_SEGMENT_ID, 9, 7, 99],
            months,
            daysOfWeek,
            hours,
            directions: ["with", "against"] as const,
            vehicleClasses: ["personal", "medium_commercial", "heavy_commercial"],
            sources: [...TRACE_SOURCES],
            details: false,
          };
          const rows = await store.segmentStats.query(q);
          const columns = await store.segmentStats.totals(q);
          assert.deepEqual(columns.months, [...months].sort());
          assert.equal(columns.length, rows.length);
          assert.ok(rows.length > 0 || months[0] === "2025-03");
          const asRows = Array.from({ length: columns.length }, (_, i) => ({
            segmentId: columns.segmentIds[i],
            month: columns.months[columns.month[i]],
            trips: columns.trips[i],
            speedCount: columns.speedCount[i],
            speedSumKph: columns.speedSumKph[i],
          }));
          assert.deepEqual(
            asRows,
            rows.map(({ segmentId, month, trips, speedCount, speedSumKph }) => ({
              segmentId,
              month,
              trips,
              speedCount,
              speedSumKph,
            })),
          );
        }
    });

    it("counts results: a page stored as a slice of columns reads back as its rows", async () => {
      const store = await backend.open();
      const rows = [
        [1, "2025-01-01", 2.5, null, { hbw: 0.5 }],
        [2, "2025-02-01", -0, 3, null],
        [3, "2025-01-01", 7, 4, { wbo: 1 }],
      ];
      const table = tableOfRows(rows, 5);
      const result = {
        requestId: "c1",
        orgId: "o1",
        kind: "metrics" as const,
        columns: ["a", "b", "c", "d", "e"],
        extra: {},
        pageSize: 2,
        totalRows: 3,
        createdAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2026-01-01T01:00:00.000Z",
      };
      const slices = [
        { table, from: 0, to: 2 },
        { table, from: 2, to: 3 },
      ];
      await store.countsResults.save(result, slices, result.createdAt);
      assert.deepEqual(await store.countsResults.page("c1", 1), JSON.parse(JSON.stringify(rows.slice(0, 2))));
      assert.deepEqual(await store.countsResults.page("c1", 2), JSON.parse(JSON.stringify(rows.slice(2))));
    });

    it("segment counts: an ingest batch adds what its cells add", async () => {
      const store = await backend.open();
      const reference = new SqliteStore(":memory:");
      const network = new Network("li", gridNetwork());
      const trips = randomTrips(network, new Rng(6, "contract-batch"), 400);
      const [a, b] = [0, 1].map(() => new SegmentCellAccumulator(network, new LocalClock("Europe/Vaduz")));
      for (let i = 0; i < trips.length; i += 200) {
        for (const trip of trips.slice(i, i + 200)) [a, b].forEach((cells) => cells.addTrip(trip));
        await store.segmentStats.addBatch("li", a.drainBatch());
        await reference.segmentStats.add("li", b.drain());
      }
      const q = {
        country: "li",
        segmentIds: network.segments.map((s) => s.id),
        months: ["2025-01", "2025-02"],
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        hours: Array.from({ length: 24 }, (_, h) => h),
        directions: ["with", "against"] as const,
        vehicleClasses: [...SEGMENT_COUNT_CLASSES],
        sources: [...TRACE_SOURCES],
      };
      const stats = await store.segmentStats.query(q);
      assert.ok(stats.length > 20, `${stats.length} segment-months`);
      assert.deepEqual(stats, await reference.segmentStats.query(q));
      await reference.close();
    });

    it("segment counts: one add over thousands of segment-months (more than the server's lock table holds)", async () => {
      const store = await backend.open();
      const cell = randomCells(new Rng(11, "wide"), 1, {
        segments: [7, 8, BIG_SEGMENT_ID],
        months: ["2025-01", "2025-02"],
        speeds: "exact",
      })[0];
      // 40,000 segment-months: a year of demo transit riders touches as many in one batch.
      const cells = Array.from({ length: 40_000 }, (_, i) => ({
        ...cell,
        segmentId: 1000 + (i % 10_000),
        month: `2025-0${1 + Math.floor(i / 10_000)}`,
      }));
      await store.segmentStats.add("li", cells);
      const stats = await store.segmentStats.query({
        country: "li",
        segmentIds: [1000, 10_999],
        months: ["2025-01"],
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        hours: Array.from({ length: 24 }, (_, h) => h),
        directions: ["with", "against"],
        vehicleClasses: [...SEGMENT_COUNT_CLASSES],
        sources: [...TRACE_SOURCES],
      });
      assert.deepEqual(
        stats.map((s) => [s.segmentId, s.trips]),
        [
          [1000, cell.trips],
          [10_999, cell.trips],
        ],
      );
    });

    it("segment counts: concurrent adds to the same segment-month all count", async () => {
      const store = await backend.open();
      const cells = randomCells(new Rng(9, "concurrent"), 80, {
        segments: [7, 8, BIG_SEGMENT_ID],
        months: ["2025-01", "2025-02"],
        speeds: "exact",
      }).map((c) => ({
        ...c,
        segmentId: 7,
        month: "2025-01",
      }));
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          Promise.resolve(store.segmentStats.add("li", cells.slice(i * 10, i * 10 + 10))),
        ),
      );
      const [sum] = await store.segmentStats.query({
        country: "li",
        segmentIds: [7],
        months: ["2025-01"],
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        hours: Array.from({ length: 24 }, (_, h) => h),
        directions: ["with", "against"],
        vehicleClasses: [...SEGMENT_COUNT_CLASSES],
        sources: [...TRACE_SOURCES],
        details: false,
      });
      assert.equal(
        sum.trips,
        cells.reduce((n, c) => n + c.trips, 0),
      );
    });

    it("accounts: organizations, members, keys", async () => {
      const store = await backend.open();
      assert.equal(await store.accounts.isEmpty(), true);
      const org = await store.accounts.createOrganization("  Acme ");
      assert.equal(org.name, "Acme");
      await assert.rejects(
        Promise.resolve().then(() => store.accounts.createOrganization("ACME")),
        rejectsWith("organization_exists"),
      );
      assert.deepEqual(await store.accounts.findOrganization("acme"), org);
      assert.deepEqual(await store.accounts.findOrganization(org.id), org);
      assert.equal(await store.accounts.findOrganization("nope"), null);
      assert.deepEqual(await store.accounts.listOrganizations(), [org]);
      await store.accounts.addUser("Zed@x.org", org.id);
      await store.accounts.addUser("amy@x.org", org.id, "viewer");
      await store.accounts.addUser("amy@x.org", org.id, "admin"); // idempotent: the first role stays
      assert.equal(await store.accounts.isMember("ZED@x.org", org.id), true);
      assert.deepEqual(await store.accounts.listMembers(org.id), ["amy@x.org", "Zed@x.org"]);
      assert.equal((await store.security.member("amy@x.org", org.id))!.role, "viewer");
      const key = {
        id: "k1",
        orgId: org.id,
        prefix: "sf_abc",
        label: "ci",
        createdAt: "2026-01-01T00:00:00.000Z",
        revokedAt: null,
      };
      await store.accounts.insertKey(key, "hash1");
      assert.deepEqual(await store.accounts.findKeyByHash("hash1"), key);
      assert.deepEqual(await store.accounts.listKeys(org.id), [key]);
      const revoked = (await store.accounts.revokeKey("sf_abc"))!;
      assert.equal(revoked.id, "k1");
      assert.ok(revoked.revokedAt);
      assert.equal(await store.accounts.findKeyByHash("hash1"), null);
      assert.equal(await store.accounts.revokeKey("none"), null);
      assert.equal(await store.accounts.isEmpty(), false);
    });

    it("security: passwords, sessions, lockouts, reset links, audit, web key, rate limits", async () => {
      const store = await backend.open();
      const s = store.security;
      const org = await store.accounts.createOrganization("Acme");
      const other = await store.accounts.createOrganization("Other");
      await store.accounts.addUser("amy@x.org", other.id);
      await store.accounts.addUser("amy@x.org", org.id, "admin");
      assert.deepEqual(await s.organizationsOf("AMY@x.org"), [other.id, org.id]);
      assert.equal(await s.setPasswordHash("amy@x.org", "h"), true);
      assert.equal(await s.setPasswordHash("nobody@x.org", "h"), false);
      assert.equal(await s.passwordHashOf("amy@x.org"), "h");
      assert.equal(await s.setRole("amy@x.org", org.id, "viewer"), true);
      assert.equal(await s.setDisabled("amy@x.org", true, "2026-01-02T00:00:00.000Z"), true);
      assert.deepEqual(await s.members(org.id), [
        { email: "amy@x.org", role: "viewer", passwordHash: "h", disabledAt: "2026-01-02T00:00:00.000Z" },
      ]);
      const session = {
        idHash: "s1",
        email: "amy@x.org",
        orgId: org.id,
        csrfToken: "c",
        createdAt: "t0",
        lastSeenAt: "t0",
      };
      await s.createSession(session);
      await s.touchSession("s1", "t1");
      assert.deepEqual(await s.findSession("s1"), { ...session, lastSeenAt: "t1" });
      await s.deleteSessionsOf("amy@x.org");
      assert.equal(await s.findSession("s1"), null);
      await s.saveFailures("ip:1", { failures: 1, lastFailureAt: "t", lockedUntil: null });
      await s.saveFailures("ip:1", { failures: 2, lastFailureAt: "t2", lockedUntil: "t9" });
      assert.deepEqual(await s.failuresOf("ip:1"), { failures: 2, lastFailureAt: "t2", lockedUntil: "t9" });
      await s.clearFailures("ip:1");
      assert.equal(await s.failuresOf("ip:1"), null);
      await s.createReset("r1", "amy@x.org", "2026-01-01T01:00:00.000Z");
      assert.equal(await s.consumeReset("r1", "2026-01-01T02:00:00.000Z"), null, "expired");
      await s.createReset("r2", "amy@x.org", "2026-01-01T01:00:00.000Z");
      assert.equal(await s.consumeReset("r2", "2026-01-01T00:30:00.000Z"), "amy@x.org");
      assert.equal(await s.consumeReset("r2", "2026-01-01T00:31:00.000Z"), null, "used once");
      for (const action of ["a", "b", "c"])
        await s.audit({ orgId: org.id, at: "t", actor: "amy", action, target: null });
      assert.deepEqual(
        (await s.auditLog(org.id, 2)).map((e) => e.action),
        ["c", "b"],
      );
      const web = await s.webKeyOf(org.id);
      assert.deepEqual(await s.webKeyOf(org.id), web);
      assert.equal(web.prefix, "web-app");
      await s.setRateLimit(web.id, 30);
      assert.equal(await s.rateLimitOf(web.id), 30);
      await s.setKeyLabel(web.id, "sign-ins");
      assert.equal((await store.accounts.listKeys(org.id))[0].label, "sign-ins");
      await store.usage.record({
        keyId: web.id,
        orgId: org.id,
        at: "2026-01-03T00:00:00.000Z",
        segments: 2,
        fields: 3,
        units: 6,
      });
      await store.usage.record({
        keyId: web.id,
        orgId: org.id,
        at: "2026-02-03T00:00:00.000Z",
        segments: 1,
        fields: 1,
        units: 1,
      });
      assert.deepEqual(await s.monthlyUsage(org.id, "2026-01-01T00:00:00.000Z"), [
        { keyId: web.id, month: "2026-01", calls: 1, units: 6 },
        { keyId: web.id, month: "2026-02", calls: 1, units: 1 },
      ]);
    });

    it("usage: totals, units per key and quotas", async () => {
      const store = await backend.open();
      const org = await store.accounts.createOrganization("Acme");
      await store.accounts.insertKey(
        { id: "k1", orgId: org.id, prefix: "sf_1", label: null, createdAt: "t", revokedAt: null },
        "h1",
      );
      for (const at of ["2026-01-01T00:00:00.000Z", "2026-01-15T00:00:00.000Z", "2026-02-01T00:00:00.000Z"])
        await store.usage.record({ keyId: "k1", orgId: org.id, at, segments: 10, fields: 2, units: 20 });
      assert.deepEqual(
        await store.usage.totals(org.id, "2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"),
        [{ keyId: "k1", calls: 2, segments: 20, fields: 4, units: 40 }],
      );
      assert.equal(await store.usage.unitsOfKey("k1", "2026-01-01", "2026-12-31"), 60);
      assert.equal(await store.usage.unitsOfKey("k2", "2026-01-01", "2026-12-31"), 0);
      assert.equal(await store.usage.setQuota("sf_1", 500), "k1");
      assert.equal(await store.usage.quotaOf("k1"), 500);
      assert.equal(await store.usage.setQuota("none", 5), null);
      await store.usage.setQuota("k1", null);
      assert.equal(await store.usage.quotaOf("k1"), null);
    });

    it("counts results: pages kept until they expire, only for their organization and kind", async () => {
      const store = await backend.open();
      const result = {
        requestId: "r1",
        orgId: "o1",
        kind: "metrics" as const,
        columns: ["segment_id", "trips"],
        extra: { data_version: "2026-01" },
        pageSize: 2,
        totalRows: 3,
        createdAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2026-01-01T01:00:00.000Z",
      };
      await store.countsResults.save(
        result,
        [
          [
            [1, 5],
            [2, 6],
          ],
          [[3, 7.5]],
        ],
        result.createdAt,
      );
      assert.deepEqual(
        await store.countsResults.get("o1", "metrics", "r1", "2026-01-01T00:30:00.000Z"),
        result,
      );
      assert.equal(await store.countsResults.get("o2", "metrics", "r1", "2026-01-01T00:30:00.000Z"), null);
      assert.equal(await store.countsResults.get("o1", "geometry", "r1", "2026-01-01T00:30:00.000Z"), null);
      assert.equal(await store.countsResults.get("o1", "metrics", "r1", "2026-01-01T01:00:00.000Z"), null);
      assert.deepEqual(await store.countsResults.page("r1", 2), [[3, 7.5]]);
      assert.equal(await store.countsResults.page("r1", 3), null);
      // Saving another result drops the expired ones.
      await store.countsResults.save({ ...result, requestId: "r2" }, [], "2026-01-01T02:00:00.000Z");
      assert.equal(await store.countsResults.page("r1", 1), null);
    });

    it("counts results: a save drops at most a few expired results, oldest first, so a backlog drains", async () => {
      const store = await backend.open();
      const result = (i: number) => ({
        requestId: `r${i}`,
        orgId: "o1",
        kind: "metrics" as const,
        columns: ["segment_id"],
        extra: {},
        pageSize: 1,
        totalRows: 2,
        createdAt: "2026-01-01T00:00:00.000Z",
        // r0 expires first.
        expiresAt: `2026-01-01T01:${String(i).padStart(2, "0")}:00.000Z`,
      });
      const backlog = 3 * EXPIRED_RESULTS_PER_SAVE + 1;
      for (let i = 0; i < backlog; i++)
        await store.countsResults.save(result(i), [[[i]], [[i + 1]]], "2026-01-01T00:00:00.000Z");
      const later = "2026-01-02T00:00:00.000Z";
      const kept = async () => {
        const ids: number[] = [];
        for (let i = 0; i < backlog; i++) if (await store.countsResults.page(`r${i}`, 2)) ids.push(i);
        return ids;
      };
      // Each save (results that expire the next day) drops the oldest few expired ones, with their pages.
      const from = (n: number) => Array.from({ length: Math.max(0, backlog - n) }, (_, i) => n + i);
      // The fourth save finds one left: the backlog is gone.
      for (let save = 1; save <= 4; save++) {
        const fresh = { ...result(100 + save), expiresAt: "2026-01-03T00:00:00.000Z" };
        await store.countsResults.save(fresh, [], later);
        assert.deepEqual(await kept(), from(save * EXPIRED_RESULTS_PER_SAVE), `after save ${save}`);
      }
      assert.deepEqual(await kept(), []);
    });

    it("zone sets: names unique per organization (any case), by name or uuid", async () => {
      const store = await backend.open();
      const org = await store.accounts.createOrganization("Acme");
      const z = zoneSet(org.id, "Centre");
      await store.zoneSets.create(z);
      const stored = { ...z, bbox: [9.5, 47.1, 9.6, 47.2] };
      assert.deepEqual(await store.zoneSets.get(org.id, "centre"), stored);
      assert.deepEqual(await store.zoneSets.get(org.id, z.uuid), stored);
      await assert.rejects(
        Promise.resolve().then(() => store.zoneSets.create(zoneSet(org.id, "CENTRE"))),
        rejectsWith("zone_set_name_taken"),
      );
      await assert.rejects(
        Promise.resolve().then(() =>
          store.zoneSets.createMany([zoneSet(org.id, "A"), zoneSet(org.id, "centre")]),
        ),
        rejectsWith("zone_set_name_taken"),
      );
      assert.equal(await store.zoneSets.get(org.id, "A"), null, "createMany is all or nothing");
      const [summary] = await store.zoneSets.list(org.id);
      assert.deepEqual(summary.bbox, [9.5, 47.1, 9.6, 47.2]);
      assert.equal(summary.withCalibration, false);
      assert.equal(await store.zoneSets.delete(org.id, "Centre"), true);
      assert.equal(await store.zoneSets.delete(org.id, "Centre"), false);
      assert.deepEqual(await store.zoneSets.list(org.id), []);
    });

    it("analyses: result pieces stored while running follow their metric's result", async () => {
      const store = await backend.open();
      const org = await store.accounts.createOrganization("Acme");
      const piece = (metric: string, n: number, csv: string) => ({ metric, piece: n, csv });
      const s = spec(org.id, "Pieces");
      await store.analyses.create({ spec: s, jobId: null });
      assert.equal(
        await store.analyses.putResultPieces(s.uuid, [piece("od", 0, "x\n")]),
        false,
        "not running",
      );
      await store.analyses.markRunning(s.uuid);
      // Out of order, from two writers, one piece written twice (a retried part): read back by number.
      assert.equal(
        await store.analyses.putResultPieces(s.uuid, [piece("od", 3, "4\n"), piece("od", 0, "1\n")]),
        true,
      );
      assert.equal(await store.analyses.putResultPieces(s.uuid, [piece("od", 1, "old\n")]), true);
      assert.equal(
        await store.analyses.putResultPieces(s.uuid, [piece("od", 1, "2\n"), piece("zod", 0, "z\n")]),
        true,
      );
      // A piece given as UTF-8 bytes (a merge part's rows) reads back as the same text.
      const bytes = new TextEncoder().encode("Zürich,5\n");
      assert.equal(
        await store.analyses.putResultPieces(s.uuid, [{ metric: "od", piece: 5, csv: bytes.subarray(0) }]),
        true,
      );
      assert.equal(
        await store.analyses.complete(s.uuid, { od: "h\n", small: "s\n" }, { keepPieces: true }),
        true,
      );
      assert.deepEqual((await store.analyses.getByUuid(s.uuid))!.metrics, ["od", "small"]);
      assert.equal(await store.analyses.result(s.uuid, "od"), "h\n1\n2\n4\nZürich,5\n");
      assert.equal(await store.analyses.result(s.uuid, "small"), "s\n");
      assert.equal(
        await store.analyses.result(s.uuid, "zod"),
        null,
        "pieces without a result are not a metric",
      );
      assert.equal(await store.analyses.markDeleted(s.uuid), true);
      assert.equal(await store.analyses.result(s.uuid, "od"), null);
      // Completed without keepPieces (a whole run after a split one): the pieces are dropped.
      const t = spec(org.id, "Pieces whole");
      await store.analyses.create({ spec: t, jobId: null });
      await store.analyses.markRunning(t.uuid);
      await store.analyses.putResultPieces(t.uuid, [piece("od", 0, "stale\n")]);
      await store.analyses.complete(t.uuid, { od: "h\n" });
      assert.equal(await store.analyses.result(t.uuid, "od"), "h\n");
    });

    it("analyses: lifecycle, results, names freed on delete", async () => {
      const store = await backend.open();
      const org = await store.accounts.createOrganization("Acme");
      const s = spec(org.id, "Rush hour");
      const created = await store.analyses.create({ spec: s, jobId: "j1" });
      assert.deepEqual(
        [created.state, created.progress, created.jobId, created.spec],
        ["queued", 0, "j1", s],
      );
      await assert.rejects(
        Promise.resolve().then(() => store.analyses.create({ spec: spec(org.id, "RUSH HOUR"), jobId: null })),
        rejectsWith("analysis_name_taken"),
      );
      assert.equal(await store.analyses.complete(s.uuid, { a: "x" }), false, "not running");
      assert.equal(await store.analyses.markRunning(s.uuid), true);
      await store.analyses.setProgress(s.uuid, 1.7);
      assert.equal((await store.analyses.getByUuid(s.uuid))!.progress, 1);
      assert.equal(await store.analyses.complete(s.uuid, { od: "a,b\n1,2\n", _review: "r" }), true);
      const done = (await store.analyses.get(org.id, "rush hour"))!;
      assert.deepEqual([done.state, done.metrics, done.progress], ["done", ["od"], 1]);
      assert.equal(await store.analyses.result(s.uuid, "od"), "a,b\n1,2\n");
      assert.equal(await store.analyses.result(s.uuid, "_review"), "r");
      assert.equal(await store.analyses.cancel(s.uuid), false);
      assert.equal(await store.analyses.markDeleted(s.uuid), true);
      assert.equal(await store.analyses.result(s.uuid, "od"), null);
      const again = spec(org.id, "Rush hour");
      await store.analyses.create({ spec: again, jobId: null });
      assert.equal((await store.analyses.get(org.id, "Rush hour"))!.uuid, again.uuid, "the live one first");
      assert.equal(await store.analyses.fail(again.uuid, "no trips"), true);
      assert.deepEqual(
        (await store.analyses.list(org.id)).map((a) => [a.uuid, a.state, a.failureReason]).sort(),
        [
          [again.uuid, "failed", "no trips"],
          [s.uuid, "deleted", null],
        ].sort(),
      );
    });

    it("analyses: the unfinished ones of every organization, and their job recorded only over the expected one", async () => {
      const store = await backend.open();
      const acme = await store.accounts.createOrganization("Acme");
      const other = await store.accounts.createOrganization("Other");
      const [a, b, c] = [spec(acme.id, "A"), spec(other.id, "B"), spec(acme.id, "C")];
      for (const s of [a, b, c]) await store.analyses.create({ spec: s, jobId: null });
      await store.analyses.markRunning(b.uuid);
      await store.analyses.cancel(c.uuid);
      const unfinished = await store.analyses.unfinished();
      assert.deepEqual(unfinished.map((x) => x.uuid).sort(), [a.uuid, b.uuid].sort());

      assert.equal(await store.analyses.assignJob(a.uuid, "j1", "j0"), false, "not the expected job");
      assert.equal(await store.analyses.assignJob(a.uuid, "j1", null), true);
      assert.equal(await store.analyses.assignJob(a.uuid, "j2", null), false, "another one came first");
      assert.equal(await store.analyses.assignJob(a.uuid, "j2", "j1"), true);
      assert.equal((await store.analyses.getByUuid(a.uuid))!.jobId, "j2");
      assert.equal(await store.analyses.assignJob(b.uuid, "j3", null), true, "running");
      assert.equal(await store.analyses.assignJob(c.uuid, "j4", null), false, "cancelled");
    });

    it("tags and the completion webhook", async () => {
      const store = await backend.open();
      const org = await store.accounts.createOrganization("Acme");
      const a = spec(org.id, "A");
      await store.analyses.create({ spec: a, jobId: null });
      assert.equal(await store.tags.create(org.id, " Weekly ", "amy"), true);
      assert.equal(await store.tags.create(org.id, "weekly", "amy"), false);
      await store.tags.tag(org.id, ["weekly", "Board"], [a.uuid], "amy");
      await store.tags.tag(org.id, ["weekly"], [a.uuid], "amy");
      assert.deepEqual(await store.tags.tagsOf(a.uuid), ["Board", "Weekly"]);
      assert.deepEqual(await store.tags.existing(org.id, ["board", "none", "WEEKLY"]), ["Board", "Weekly"]);
      assert.deepEqual(
        (await store.tags.list(org.id)).map((t) => [t.name, t.analysisCount]),
        [
          ["Board", 1],
          ["Weekly", 1],
        ],
      );
      await store.tags.untag(org.id, ["board"], [a.uuid]);
      assert.deepEqual(await store.tags.tagsOf(a.uuid), ["Weekly"]);
      assert.equal(await store.notifications.completionWebhook(org.id), null);
      await store.notifications.setCompletionWebhook(org.id, "https://example.org/a");
      await store.notifications.setCompletionWebhook(org.id, "https://example.org/b");
      assert.equal(await store.notifications.completionWebhook(org.id), "https://example.org/b");
      await store.notifications.setCompletionWebhook(org.id, null);
      assert.equal(await store.notifications.completionWebhook(org.id), null);
    });

    it("network, transit and preset areas: replaced per country", async () => {
      const store = await backend.open();
      const segment = {
        id: BIG_SEGMENT_ID,
        wayId: 123_456_789_012,
        index: 0,
        roadClass: "primary",
        highway: "primary",
        roadType: "road",
        oneway: true,
        speedKph: 50.5,
        name: "Hauptstrasse",
        lengthM: 123.25,
        fromNode: 1,
        toNode: 2,
        access: 7,
        coords: [
          [9.51, 47.14],
          [9.52, 47.15],
        ],
      } as never;
      const info = {
        country: "li",
        source: "li.osm.pbf",
        segmentCount: 0,
        importedAt: "2026-01-01T00:00:00.000Z",
        timeZone: "Europe/Vaduz",
      };
      await store.network.replaceCountry(info, [segment]);
      await store.network.replaceCountry(info, [segment]);
      assert.deepEqual(await store.network.loadSegments("li"), [segment]);
      assert.deepEqual(await store.network.countries(), [{ ...info, segmentCount: 1 }]);
      const rail = {
        kind: "rail",
        osmId: 5,
        service: "train",
        name: "S1",
        ref: null,
        wayIds: [1, 2],
        coords: [[9.5, 47.1]],
      } as never;
      const bus = {
        kind: "bus",
        osmId: 3,
        service: "bus",
        name: null,
        ref: "11",
        wayIds: [4],
        coords: [],
      } as never;
      await store.network.replaceTransit("li", [bus, rail]);
      assert.deepEqual(await store.network.loadTransit("li"), [rail, bus]);
      const area = (areaId: string, geographyType = "admin_8") => ({
        country: "li",
        geographyType,
        areaId,
        osmId: 1000 + Number(areaId.length),
        name: `Area ${areaId}`,
        geometry: {
          type: "Polygon" as const,
          coordinates: [
            [
              [9.5, 47.1],
              [9.6, 47.1],
              [9.5, 47.1],
            ],
          ],
        },
      });
      await store.presetAreas.replaceCountry("li", [area("b"), area("a"), area("9490", "zip")]);
      assert.deepEqual(await store.presetAreas.types("li"), [
        { geographyType: "admin_8", areas: 2 },
        { geographyType: "zip", areas: 1 },
      ]);
      assert.deepEqual(await store.presetAreas.list("li", "admin_8"), [area("a"), area("b")]);
      await store.presetAreas.replaceCountry("li", []);
      assert.deepEqual(await store.presetAreas.types("li"), []);
    });

    it("transaction: everything inside commits together or not at all", async () => {
      const store = await backend.open();
      const org = await store.accounts.createOrganization("Acme");
      const s = spec(org.id, "One");
      await assert.rejects(
        store.transaction(async () => {
          const job = await store.jobs.enqueue("analysis", { uuid: s.uuid });
          await store.analyses.create({ spec: s, jobId: job.id });
          throw new Error("the caller changed its mind");
        }),
        /changed its mind/,
      );
      assert.equal(await store.analyses.getByUuid(s.uuid), null);
      assert.equal(await store.jobs.claim("w", 1000), null);
      const created = await store.transaction(async () => {
        const job = await store.jobs.enqueue("analysis", { uuid: s.uuid });
        return store.analyses.create({ spec: s, jobId: job.id });
      });
      assert.equal((await store.jobs.claim("w", 1000))!.id, created.jobId);
    });
  });
}
