import { collect } from "../helpers/collect.js";
import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tripMatcher } from "../../src/engine/matching/index.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { storeNetworks } from "../../src/app/networks.js";
import type { Segment } from "../../src/engine/network/types.js";
import { Simulation } from "../../src/engine/simulate/index.js";
import { writeSimulation } from "../../src/engine/simulate/writers.js";
import { columnsToTrips } from "../../src/engine/trips/columns.js";
import { VEHICLE_CLASSES } from "../../src/engine/trips/types.js";
import type { AppContext } from "../../src/app/context.js";
import { ingestFiles } from "../../src/app/ingest.js";
import { MatchPool } from "../../src/engine/ingest/match-pool.js";
import { Network } from "../../src/engine/network/network.js";
import { splitTraceFile } from "../../src/engine/ingest/split-file.js";
import { emptyIngestCounts } from "../../src/engine/ingest/pipeline.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { inDayFiles } from "../../bench/lib/day-files.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

let dir: string;
let segments: Segment[];
let file: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "sf-ingest-parallel-"));
  segments = await readOsmSegments(MONACO_PBF);
  const rt = await runtime("setup");
  const sim = new Simulation((await rt.networks.get("mc"))!, {
    from: "2025-03",
    to: "2025-03",
    tripsPerDay: 6,
    seed: 11,
    source: "lbs",
    samplingS: 30,
    noiseM: 10,
  });
  file = writeSimulation(sim.trips(), join(dir, "traces")).months[0].traces;
  await rt.store.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function runtime(name: string): Promise<AppContext> {
  const store = new SqliteStore(join(dir, `${name}.sqlite`));
  await store.network.replaceCountry(
    { country: "mc", source: "test", segmentCount: segments.length, importedAt: new Date().toISOString() },
    segments,
  );
  return {
    store,
    networks: storeNetworks(store.network),
  };
}

let runs = 0;

/**
 * Ingests into a fresh store, one ingest per list of `calls` (each of its files); answers the last report,
 * the progress lines and everything stored. Workers start for any input unless `workersFromBytes` says.
 */
async function ingestWith(threads: number, calls = [[file]], workersFromBytes = 0) {
  const rt = await runtime(`run-${runs++}`);
  const progress: string[] = [];
  const ingest = async (paths: string[]) =>
    await ingestFiles(rt, paths, {
      country: "mc",
      source: "lbs",
      vehicleClass: "personal",
      matcher: tripMatcher((await rt.networks.get("mc"))!),
      threads,
      workersFromBytes,
      // Small batches, so many groups are in flight and stored across several transactions.
      batchSize: 40,
      onProgress: (line) => progress.push(line),
    });
  let report = await ingest(calls[0]);
  for (const paths of calls.slice(1)) report = await ingest(paths);
  const trips = (await collect(rt.store.trips.scan("mc"))).flatMap(columnsToTrips);
  const counts = await rt.store.segmentStats.query({
    country: "mc",
    segmentIds: segments.map((s) => s.id),
    months: ["2025-03"],
    daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
    hours: Array.from({ length: 24 }, (_, h) => h),
    directions: ["with", "against"],
    vehicleClasses: VEHICLE_CLASSES,
    sources: ["lbs"],
  });
  await rt.store.close();
  return { files: report.files, totals: report.totals, problems: report.problems, progress, trips, counts };
}

const matchingOn = (progress: string[]) => progress.filter((line) => line.startsWith("matching on"));

it("matching on two worker threads stores exactly the trips and tallies of one thread, in the same order", async () => {
  const single = await ingestWith(1);
  const parallel = await ingestWith(2);
  assert.ok(single.trips.length > 100, `a real workload (${single.trips.length} trips)`);
  assert.deepEqual(parallel.totals, single.totals);
  assert.deepEqual(parallel.problems, single.problems);
  assert.deepEqual(parallel.trips, single.trips);
  assert.deepEqual(parallel.counts, single.counts);
});

it("an ingest starts its own workers only for an input of `workersFromBytes` or more: the same trips and tallies", async () => {
  const single = await ingestWith(1);
  assert.deepEqual(matchingOn(single.progress), []);
  const bytes = statSync(file).size;
  const large = await ingestWith(2, [[file]], bytes);
  assert.deepEqual(matchingOn(large.progress), ["matching on 2 worker threads"]);
  assert.deepEqual(large.totals, single.totals);
  assert.deepEqual(large.trips, single.trips);
  assert.deepEqual(large.counts, single.counts);
  // A smaller input is matched on this thread: starting the workers would cost more than they save.
  const small = await ingestWith(2, [[file]], bytes + 1);
  const megabytes = (bytes / 1e6).toFixed(1);
  assert.deepEqual(matchingOn(small.progress), [
    `matching on the main thread: ${megabytes} MB of traces would not repay starting 2 worker threads`,
  ]);
  assert.deepEqual(small.trips, single.trips);
  assert.deepEqual(small.counts, single.counts);
});

it("daily files in one ingest on two worker threads: the trips, tallies and per-file counts of one thread", async () => {
  const days = [inDayFiles(file, 5)];
  const single = await ingestWith(1, days);
  const parallel = await ingestWith(2, days);
  assert.equal(single.files.length, 5);
  assert.deepEqual(parallel.files, single.files);
  assert.deepEqual(parallel.trips, single.trips);
  assert.deepEqual(parallel.counts, single.counts);
});

it("a batch with trips stored before adds the tallies of its new trips only", async () => {
  // Every other device's rows first: the whole file's batches then mix trips stored before with new ones.
  const [header, ...lines] = readFileSync(file, "utf8").trimEnd().split("\n");
  const devices = [...new Set(lines.map((line) => line.split(",")[0]))].filter((_, i) => i % 2 === 0);
  const some = join(dir, "some-devices.csv");
  writeFileSync(some, [header, ...lines.filter((line) => devices.includes(line.split(",")[0]))].join("\n"));
  const once = await ingestWith(2);
  const twice = await ingestWith(2, [[some], [file]]);
  assert.ok(twice.totals.duplicates > 0 && twice.totals.stored > 0, "the second ingest met both kinds");
  assert.equal(twice.totals.stored + twice.totals.duplicates, once.totals.stored);
  // Speeds are tallied in exact steps: added in other batches, the sums are still the same to the bit.
  const sorted = (rows: typeof once.counts) => [...rows].sort((a, b) => a.segmentId - b.segmentId);
  assert.deepEqual(sorted(twice.counts), sorted(once.counts));
});

it("the matching pool starts groups in the order they were sent, so each can be taken as it comes", async (t) => {
  const split = splitTraceFile(file, { source: "lbs", vehicleClass: "personal" }, emptyIngestCounts());
  const raw = (await collect(split)).flat();
  const groups = Array.from({ length: 8 }, (_, g) => raw.slice(g * 4, g * 4 + 4));
  const pool = new MatchPool(new Network("mc", segments), 1);
  t.after(() => pool.close());
  const answered: number[] = [];
  // All sent at once, as the pipeline keeps groups in flight; one thread answers them in the order it starts them.
  await Promise.all(groups.map(async (group, g) => (await pool.match(group), answered.push(g))));
  assert.deepEqual(
    answered,
    groups.map((_, g) => g),
  );
});
