import { collect } from "../helpers/collect.js";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { matchTrip } from "../../src/engine/matching/index.js";
import { groupOutcomes } from "../../src/engine/ingest/match-pool.js";
import type { Network } from "../../src/engine/network/network.js";
import { storeNetworks } from "../../src/app/networks.js";
import { ACCESS_CAR, type Segment } from "../../src/engine/network/types.js";
import { columnsToTrips } from "../../src/engine/trips/columns.js";
import type { MatchedTrip, RawTrip } from "../../src/engine/trips/types.js";
import type { AppContext } from "../../src/app/context.js";
import {
  addFileReport,
  addIngestReport,
  FileDigest,
  emptyIngestReport,
  formatIngestReport,
  ingestFiles,
  type IngestReport,
} from "../../src/app/ingest.js";
import { emptyIngestCounts } from "../../src/engine/ingest/pipeline.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { storeDigest } from "../helpers/store-digest.js";

/** An east-west road at lat 52 from lon 13.00 to 13.05 in five pieces. */
function road(): Segment[] {
  return Array.from({ length: 5 }, (_, i) => ({
    id: 10_000 + i,
    wayId: 1,
    index: i,
    roadClass: "primary",
    highway: "primary",
    roadType: "Primary",
    oneway: false,
    speedKph: 50,
    name: "Hauptstraße",
    lengthM: 686,
    fromNode: i,
    toNode: i + 1,
    access: ACCESS_CAR,
    coords: [
      [13 + i * 0.01, 52],
      [13 + (i + 1) * 0.01, 52],
    ],
  }));
}

const T0 = 1767600000; // 2026-01-05T08:00:00Z

/** `n` rows of a device moving along lat `lat` from `lon0` by `dLon` every 15 s, from `t0`. */
const rows = (device: string, t0: number, lon0: number, dLon: number, n: number, lat = 52.0001) =>
  Array.from({ length: n }, (_, i) => `${device},${t0 + 15 * i},${lat},${(lon0 + i * dLon).toFixed(6)}`);

const CSV = [
  "device_id,timestamp,lat,lon",
  ...rows("d1", T0, 13.001, 0.0024, 20), // east along the whole road
  ...rows("d1", T0 + 3600, 13.049, -0.0024, 20), // an hour later back west
  "d2,1767600000,95,13.01",
  ...rows("far", T0, 13.001, 0.0024, 10, 52.1), // 11 km north of the road
].join("\n");

describe("ingestFiles", () => {
  let dir: string;
  let rt: AppContext;
  let de: Network;
  let file: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "sf-ingest-"));
    file = join(dir, "t.csv");
    writeFileSync(file, CSV);
    const store = new SqliteStore(":memory:");
    await store.network.replaceCountry(
      { country: "de", source: "test", segmentCount: 5, importedAt: new Date().toISOString() },
      road(),
    );
    rt = {
      store,
      networks: storeNetworks(store.network),
    };
    de = (await rt.networks.get("de"))!;
  });
  after(async () => {
    await rt.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ingest = () =>
    ingestFiles(rt, [file], {
      country: "DE",
      source: "telematics",
      vehicleClass: "personal",
      matcher: (trip) => matchTrip(de, trip),
      batchSize: 1,
    });

  it("reads, splits, matches and stores, reporting every count", async () => {
    const report = await ingest();
    assert.deepEqual(report.totals, {
      pointsRead: 50,
      badRows: 1,
      droppedPoints: { jump: 0, outOfOrder: 0, duplicate: 0, dwell: 0 },
      droppedTrips: { tooFewPoints: 0, tooShort: 0, zeroDuration: 0 },
      trips: 3,
      matchedTrips: 2,
      splitByMatcher: 0,
      unmatchedTrips: 1,
      matchErrors: 0,
      stored: 2,
      duplicates: 0,
      readErrors: 0,
      interrupted: 0,
    });
    assert.deepEqual(report.problems, ["t.csv:42: latitude 95 is out of range"]);
    assert.match(formatIngestReport(report).join("\n"), /stored: +2 \(0 already stored\)/);
  });

  it("stores the matched paths in travel order", async () => {
    const trips = (await collect(rt.store.trips.scan("de"))).flatMap(columnsToTrips);
    assert.deepEqual(
      trips.map((t) => [t.deviceId, t.startT / 1000, t.path.map((s) => [s.segmentId % 10, s.forward])]),
      [
        ["d1", T0, [0, 1, 2, 3, 4].map((i) => [i, true])],
        ["d1", T0 + 3600, [4, 3, 2, 1, 0].map((i) => [i, false])],
      ],
    );
    assert.deepEqual(await rt.store.tripStats.monthsWithTrips("de", ["personal"]), [
      { year: 2026, month: 1 },
    ]);
  });

  it("stores nothing new when the same file is ingested again, and records both runs", async () => {
    const again = await ingest();
    assert.equal(again.totals.stored, 0);
    assert.equal(again.totals.duplicates, 2);
    assert.equal(await rt.store.trips.countTrips("de"), 2);
    const runs = await rt.store.trips.listIngestRuns("de");
    assert.equal(runs.length, 2);
    assert.equal(runs[0].sha256, createHash("sha256").update(readFileSync(file)).digest("hex"));
    assert.equal(runs[0].sizeBytes, Buffer.byteLength(CSV));
    assert.equal(runs[1].counts.duplicates, 2);
  });

  // A batch with trips stored before counts its new trips again from what it kept of them (their paths
  // read back from the batch's columns): the tallies must be those of the new trips matched afresh.
  it("tallies a batch of new and already stored trips as a batch of the new ones alone", async () => {
    const [earlier, whole] = [join(dir, "earlier.csv"), join(dir, "whole.csv")];
    const d1Out = rows("d1", T0, 13.001, 0.0024, 20);
    const later = [
      ...rows("d1", T0 + 3600, 13.049, -0.0024, 20),
      ...rows("d3", T0 + 600, 13.002, 0.0021, 22),
    ];
    writeFileSync(earlier, ["device_id,timestamp,lat,lon", ...d1Out].join("\n"));
    writeFileSync(whole, ["device_id,timestamp,lat,lon", ...d1Out, ...later].join("\n"));
    const tallied = async (files: string[]) => {
      const store = new SqliteStore(":memory:");
      await store.network.replaceCountry(
        { country: "de", source: "test", segmentCount: 5, importedAt: new Date().toISOString() },
        road(),
      );
      const ctx = { store, networks: storeNetworks(store.network) };
      const reports = [];
      for (const f of files)
        reports.push(
          await ingestFiles(ctx, [f], {
            country: "de",
            source: "lbs",
            vehicleClass: "personal",
            matcher: (trip) => matchTrip(de, trip),
          }),
        );
      const stats = await store.segmentStats.query({
        country: "de",
        segmentIds: road().map((s) => s.id),
        months: ["2026-01"],
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        hours: Array.from({ length: 24 }, (_, h) => h),
        directions: ["with", "against"],
        vehicleClasses: ["personal"],
        sources: ["lbs"],
      });
      const trips = (await collect(store.trips.scan("de"))).flatMap(columnsToTrips);
      await store.close();
      return { reports, stats, trips: trips.sort((a, b) => a.startT - b.startT) };
    };
    const twice = await tallied([earlier, whole]);
    const once = await tallied([whole]);
    assert.deepEqual(
      twice.reports.map((r) => [r.totals.stored, r.totals.duplicates]),
      [
        [1, 0],
        [2, 1],
      ],
    );
    assert.equal(
      once.stats.reduce((n, s) => n + s.trips, 0),
      15,
      "three trips over the 5 segments",
    );
    assert.deepEqual(twice.stats, once.stats);
    assert.deepEqual(twice.trips, once.trips);
  });

  it("stores the trip purpose and income band of the trace's columns on the matched trips", async () => {
    const attributed = join(dir, "attributes.csv");
    const withAttributes = (r: string[], purpose: string, band: number) =>
      r.map((row) => `${row},,,personal,${purpose},${band}`);
    writeFileSync(
      attributed,
      [
        "device_id,timestamp,lat,lon,speed,heading,vehicle_class,trip_purpose,income_band",
        ...withAttributes(rows("s1", T0, 13.001, 0.0024, 20), "hbw", 4),
        ...withAttributes(rows("s1", T0 + 3600, 13.049, -0.0024, 20), "hbo", 4),
      ].join("\n"),
    );
    const report = await ingestFiles(rt, [attributed], {
      country: "de",
      source: "lbs",
      vehicleClass: "personal",
      matcher: (trip) => matchTrip(de, trip),
    });
    assert.equal(report.totals.stored, 2);
    const stored = (await collect(rt.store.trips.scan("de")))
      .flatMap(columnsToTrips)
      .filter((t) => t.deviceId === "s1");
    assert.deepEqual(
      stored.map((t) => [t.startT / 1000, t.purpose, t.incomeBand]).sort((a, b) => +a[0]! - +b[0]!),
      [
        [T0, "hbw", 4],
        [T0 + 3600, "hbo", 4],
      ],
    );
  });

  it("counts a trip the matcher throws on and goes on with the others", async () => {
    const report = await ingestFiles(rt, [file], {
      country: "de",
      source: "lbs",
      vehicleClass: "personal",
      matcher: (trip) => {
        if (trip.deviceId === "far") throw new Error("no candidates");
        return matchTrip(de, trip);
      },
    });
    assert.equal(report.totals.matchErrors, 1);
    assert.equal(report.totals.stored, 2); // new source: new trips
    assert.deepEqual(report.problems.slice(1), [
      "matching the trip of far at 2026-01-05T08:00:00.000Z failed: no candidates",
    ]);
  });

  it("says when the matcher split a trip, so more trips stored than read is explained", async () => {
    // A matcher that breaks each trip in two halves, as the HMM does at a gap it cannot bridge.
    const inHalves = (trip: RawTrip): MatchedTrip[] =>
      matchTrip(de, trip).flatMap((m) => {
        const mid = Math.floor(m.path.length / 2);
        const midT = (m.startT + m.endT) / 2;
        return [
          { ...m, path: m.path.slice(0, mid), endT: midT },
          { ...m, path: m.path.slice(mid), startT: midT + 1 },
        ];
      });
    const lines: string[] = [];
    const report = await ingestFiles(rt, [file], {
      country: "de",
      source: "lbs",
      vehicleClass: "heavy_commercial",
      matcher: inHalves,
      onProgress: (line) => lines.push(line),
    });
    assert.equal(report.totals.trips, 3);
    assert.equal(report.totals.splitByMatcher, 2);
    assert.equal(report.totals.stored, 4);
    assert.match(
      lines.join("\n"),
      /t\.csv: done, .*3 trips, 4 stored \(the matcher split 2 trips into more, where the match broke off\)/,
    );
    assert.match(formatIngestReport(report).join("\n"), /2 split into more by the matcher/);
  });

  it("keeps what it read from a corrupt .gz and reports where reading stopped", async () => {
    const gz = gzipSync(CSV);
    const cut = join(dir, "cut.csv.gz");
    writeFileSync(cut, Buffer.concat([gz.subarray(0, gz.length - 200), Buffer.alloc(200, 7)]));
    const report = await ingestFiles(rt, [cut], {
      country: "de",
      source: "telematics",
      vehicleClass: "bicycle",
      matcher: () => [],
    });
    assert.equal(report.totals.readErrors, 1);
    assert.ok(report.totals.pointsRead > 0);
    assert.match(report.problems.at(-1)!, /^cut\.csv\.gz: reading stopped: /);
  });

  // The digest is taken from the bytes as the ingest reads them (the file is read once); where the reader
  // stopped short (here at a .gz whose header is corrupt), the file is read again for it.
  it("records each file's own SHA-256: gzipped over many reads, and cut short by a corrupt .gz", async () => {
    const lines = Array.from(
      { length: 3000 },
      (_, i) => `${createHash("md5").update(`d${i}`).digest("hex")},${T0 + i},52.0001,13.${i}`,
    );
    const whole = gzipSync(["device_id,timestamp,lat,lon", ...lines].join("\n"));
    assert.ok(whole.length > 64 * 1024, "the file takes several reads");
    const large = join(dir, "large.csv.gz");
    writeFileSync(large, whole);
    const corrupt = join(dir, "corrupt.csv.gz");
    writeFileSync(corrupt, Buffer.concat([Buffer.alloc(10), whole.subarray(10)]));
    const report = await ingestFiles(rt, [large, corrupt], {
      country: "de",
      source: "telematics",
      vehicleClass: "bicycle",
      matcher: () => [],
    });
    assert.equal(report.totals.readErrors, 1);
    const runs = await rt.store.trips.listIngestRuns("de");
    for (const path of [large, corrupt]) {
      const run = runs.find((r) => r.path === path)!;
      assert.equal(run.sha256, createHash("sha256").update(readFileSync(path)).digest("hex"), path);
      assert.equal(run.sizeBytes, readFileSync(path).length);
    }
  });

  it("refuses a missing file before ingesting anything", async () => {
    await assert.rejects(
      ingestFiles(rt, [file, join(dir, "nope.csv")], {
        country: "de",
        source: "lbs",
        vehicleClass: "personal",
        matcher: () => [],
      }),
      /no such file: .*nope\.csv/,
    );
  });
});

describe("ingestFiles over several files", () => {
  const HEADER = "device_id,timestamp,lat,lon";
  // Three days' files and an empty one: a day's trips, then the next's, as daily exports come.
  const DAYS = [
    [...rows("a1", T0, 13.001, 0.0024, 20), ...rows("a1", T0 + 3600, 13.049, -0.0024, 20)],
    [...rows("b1", T0 + 86_400, 13.001, 0.0024, 20), ...rows("far", T0 + 86_400, 13.001, 0.0024, 10, 52.1)],
    [],
    rows("d1", T0 + 3 * 86_400, 13.049, -0.0024, 20),
  ];
  let dir: string;
  let paths: string[];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "sf-ingest-files-"));
    paths = DAYS.map((day, i) => {
      const path = join(dir, `day${i + 1}.csv`);
      writeFileSync(path, [HEADER, ...day].join("\n"));
      return path;
    });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A fresh store with the road, and what it did in order: each store of trips, each file recorded. */
  async function roadStore() {
    const store = new SqliteStore(":memory:");
    await store.network.replaceCountry(
      { country: "de", source: "test", segmentCount: 5, importedAt: new Date().toISOString() },
      road(),
    );
    const events: string[] = [];
    const append = store.trips.appendTrips.bind(store.trips);
    store.trips.appendTrips = async (country, trips, prepared) => {
      events.push(`store ${trips.map((t) => t.deviceId).join(" ")}`);
      return await append(country, trips, prepared);
    };
    const record = store.trips.recordIngestRun.bind(store.trips);
    store.trips.recordIngestRun = async (run) => {
      events.push(`record ${run.path.slice(dir.length + 1)}`);
      await record(run);
    };
    const ctx: AppContext = { store, networks: storeNetworks(store.network) };
    const de = (await ctx.networks.get("de"))!;
    const ingest = (files: string[], more: Partial<Parameters<typeof ingestFiles>[2]> = {}) =>
      ingestFiles(ctx, files, {
        country: "de",
        source: "lbs",
        vehicleClass: "personal",
        matcher: (trip) => matchTrip(de, trip),
        ...more,
      });
    return { store, events, ingest };
  }

  const storedAndDuplicates = (report: IngestReport) =>
    report.files.map((f) => [f.path.slice(dir.length + 1), f.counts.stored, f.counts.duplicates]);

  it("stores the files' trips in one batch, counts each file's own, records each once its trips are stored", async () => {
    const { store, events, ingest } = await roadStore();
    const report = await ingest(paths);
    assert.deepEqual(storedAndDuplicates(report), [
      ["day1.csv", 2, 0],
      ["day2.csv", 1, 0],
      ["day3.csv", 0, 0],
      ["day4.csv", 1, 0],
    ]);
    assert.deepEqual(
      report.files.map((f) => [f.counts.pointsRead, f.counts.trips, f.counts.unmatchedTrips]),
      [
        [40, 2, 0],
        [30, 2, 1],
        [0, 0, 0],
        [20, 1, 0],
      ],
    );
    assert.deepEqual(events, [
      "store a1 a1 b1 d1",
      "record day1.csv",
      "record day2.csv",
      "record day3.csv",
      "record day4.csv",
    ]);
    const runs = await store.trips.listIngestRuns("de");
    assert.deepEqual(
      runs.map((r) => [r.path, r.counts.stored, r.counts.trips]),
      paths.map((path, i) => [path, [2, 1, 0, 1][i], [2, 2, 0, 1][i]]),
    );
    await store.close();
  });

  // With matching in groups (worker threads), a file's trips may still be matching when the next, empty file
  // has been read: the empty file is done after it, never before.
  it("records the files in reading order when trips are matched in groups", async () => {
    const { store, events, ingest } = await roadStore();
    const de = (await storeNetworks(store.network).get("de"))!;
    const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const matchPool = {
      match: async (trips: RawTrip[]) => {
        await later(20);
        return trips.map((trip) => ({ matched: matchTrip(de, trip) }));
      },
    };
    const report = await ingest([paths[0], paths[2], paths[3]], { matchPool });
    assert.deepEqual(storedAndDuplicates(report), [
      ["day1.csv", 2, 0],
      ["day3.csv", 0, 0],
      ["day4.csv", 1, 0],
    ]);
    assert.deepEqual(events, ["store a1 a1 d1", "record day1.csv", "record day3.csv", "record day4.csv"]);
    await store.close();
  });

  // Storing a batch blocks this thread: the pool must have every group in flight by then.
  it("hands the matching ahead as each batch's store begins", async () => {
    const { store, events, ingest } = await roadStore();
    const de = (await storeNetworks(store.network).get("de"))!;
    const matchPool = {
      match: async (trips: RawTrip[]) => trips.map((trip) => ({ matched: matchTrip(de, trip) })),
      handAhead: () => events.push("hand ahead"),
    };
    await ingest(paths, { matchPool, batchSize: 3 });
    assert.deepEqual(
      events.filter((e) => !e.startsWith("record")),
      ["hand ahead", "store a1 a1 b1", "hand ahead", "store d1"],
    );
    await store.close();
  });

  it("counts the trips a batch already had against the file they came from", async () => {
    const { store, events, ingest } = await roadStore();
    await ingest([paths[1]]);
    events.length = 0;
    const report = await ingest(paths, { batchSize: 3 });
    assert.deepEqual(storedAndDuplicates(report), [
      ["day1.csv", 2, 0],
      ["day2.csv", 0, 1],
      ["day3.csv", 0, 0],
      ["day4.csv", 1, 0],
    ]);
    // The first batch ends with day 2's trip; day 3 has none to wait for, so it is done right after day 2.
    assert.deepEqual(events, [
      "store a1 a1 b1",
      "record day1.csv",
      "record day2.csv",
      "record day3.csv",
      "store d1",
      "record day4.csv",
    ]);
    await store.close();
  });

  it("stores the same as one file at a time, whatever the batch size", async () => {
    const digests = [];
    for (const batchSize of [1, 2, 3, undefined]) {
      const { store, ingest } = await roadStore();
      await ingest(paths, { batchSize });
      digests.push(await storeDigest(store, "de"));
      await store.close();
    }
    const { store, ingest } = await roadStore();
    for (const path of paths) await ingest([path]);
    const oneAtATime = await storeDigest(store, "de");
    await store.close();
    assert.equal(oneAtATime.trips, 4);
    for (const digest of digests) assert.deepEqual(digest, oneAtATime);
  });

  // Stopped while reading a file whose trips read so far are all stored: its open trips are dropped, so it
  // is not whole and must not be recorded as ingested.
  it("never records a file that a stop cut short, even with every trip it kept stored", async () => {
    const { events, ingest, store } = await roadStore();
    const cut = join(dir, "cut.csv");
    const longFar = rows("far", T0 + 7200, 13.001, 0.000001, 100_500, 52.1);
    writeFileSync(cut, [HEADER, ...DAYS[0].slice(0, 21), ...longFar].join("\n"));
    const stop = new AbortController();
    const report = await ingest([cut], {
      batchSize: 1,
      signal: stop.signal,
      onProgress: (line) => {
        if (/: [\d,]+ points, /.test(line)) stop.abort("SIGTERM");
      },
    });
    assert.equal(report.interrupted, "SIGTERM");
    assert.deepEqual(events, ["store a1"], "the first trip stored, the file not recorded");
    assert.equal(report.files[0].counts.interrupted, 1);
    await store.close();
  });

  // Stopped while a batch fills, the files that wait for it are left unfinished (not recorded); a file with
  // nothing to store (day 3) is done once the files before it are. A run of the same files then stores the
  // rest, what was stored before coming back as duplicates.
  it("stopped with a batch in progress, records only the files stored whole", async () => {
    const { store, events, ingest } = await roadStore();
    const stop = new AbortController();
    const de = (await storeNetworks(store.network).get("de"))!;
    const report = await ingest(paths, {
      batchSize: 3,
      signal: stop.signal,
      matcher: (trip) => {
        if (trip.deviceId === "d1") stop.abort("SIGTERM");
        return matchTrip(de, trip);
      },
    });
    assert.equal(report.interrupted, "SIGTERM");
    assert.deepEqual(events, ["store a1 a1 b1", "record day1.csv", "record day2.csv", "record day3.csv"]);
    assert.deepEqual(
      report.files.map((f) => [f.path.slice(dir.length + 1), f.counts.stored, f.counts.interrupted]),
      [
        ["day1.csv", 2, 0],
        ["day2.csv", 1, 0],
        ["day3.csv", 0, 0],
        ["day4.csv", 0, 1],
      ],
    );
    events.length = 0;
    const again = await ingest(paths, { batchSize: 3 });
    assert.equal(again.interrupted, undefined);
    assert.deepEqual(storedAndDuplicates(again), [
      ["day1.csv", 0, 2],
      ["day2.csv", 0, 1],
      ["day3.csv", 0, 0],
      ["day4.csv", 1, 0],
    ]);
    const clean = await roadStore();
    await clean.ingest(paths);
    assert.deepEqual(await storeDigest(store, "de"), await storeDigest(clean.store, "de"));
    await Promise.all([store.close(), clean.store.close()]);
  });
});

describe("FileDigest", () => {
  it("answers the digest of the bytes it was given when they were the whole file, else reads the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sf-digest-"));
    try {
      const path = join(dir, "f.csv");
      writeFileSync(path, "xyz");
      const sha = (text: string) => createHash("sha256").update(text).digest("hex");
      const seen = new FileDigest();
      seen.add(Buffer.from("ab"));
      seen.add(Buffer.from("c"));
      // As many bytes as the file: what was read is the file (it is not read again).
      assert.equal(await seen.hex(path, 3), sha("abc"));
      const short = new FileDigest();
      short.add(Buffer.from("x"));
      assert.equal(await short.hex(path, 3), sha("xyz"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("groupOutcomes", () => {
  it("fails every trip of a group whose matcher failed as a whole, and passes outcomes through otherwise", async () => {
    const trips = ["a", "b"].map((deviceId) => ({ deviceId, points: [] }) as unknown as RawTrip);
    assert.deepEqual(await groupOutcomes(trips, Promise.reject(new Error("worker died"))), [
      { error: "worker died" },
      { error: "worker died" },
    ]);
    const outcomes = [{ matched: [] }, { error: "no candidates" }];
    assert.deepEqual(await groupOutcomes(trips, Promise.resolve(outcomes)), outcomes);
  });
});

describe("addIngestReport", () => {
  it("adds a later ingest's files, totals and problems, keeping at most maxProblems messages", () => {
    const reportOf = (path: string, problems: string[], moreProblems: number) => {
      const r = emptyIngestReport(problems);
      addFileReport(r, path, { ...emptyIngestCounts(), trips: 2, stored: 1 });
      r.moreProblems = moreProblems;
      return r;
    };
    const report = emptyIngestReport();
    addIngestReport(report, reportOf("a.csv", ["a1", "a2"], 0), 3);
    addIngestReport(report, reportOf("b.csv", ["b1", "b2"], 4), 3);
    assert.deepEqual(
      report.files.map((f) => f.path),
      ["a.csv", "b.csv"],
    );
    assert.equal(report.totals.trips, 4);
    assert.equal(report.totals.stored, 2);
    assert.deepEqual(report.problems, ["a1", "a2", "b1"]);
    assert.equal(report.moreProblems, 5);
  });
});
