import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppContext } from "../../src/app/context.js";
import { ingestFiles } from "../../src/app/ingest.js";
import { ingestFilesInChunks, MAX_OUTSTANDING_CHUNKS } from "../../src/app/ingest-chunked.js";
import type { IngestChunkPayload } from "../../src/app/ingest-chunk.js";
import type { Job } from "../../src/app/ports/job-queue.js";
import { tripMatcher } from "../../src/engine/matching/index.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import type { Segment } from "../../src/engine/network/types.js";
import { Simulation } from "../../src/engine/simulate/index.js";
import { writeSimulation } from "../../src/engine/simulate/writers.js";
import { IngestChunkJobs } from "../../src/jobs/ingest-chunk-job.js";
import { storeNetworks } from "../../src/app/networks.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { storeDigest } from "../helpers/store-digest.js";
import { inDayFiles } from "../../bench/lib/day-files.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

/**
 * The command's side of a distributed ingest on one SQLite store and its own queue, with a job loop
 * standing in for a worker process (the real IngestChunkJobs, matching on a MatchPool thread): the same
 * report and stored data as ingestFiles, with more chunks than may wait at once (the reader waits for
 * the worker).
 */

let dir: string;
let segments: Segment[];
let file: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "sf-ingest-chunked-"));
  segments = await readOsmSegments(MONACO_PBF);
  const ctx = await contextOf("setup");
  const sim = new Simulation((await ctx.networks.get("mc"))!, {
    ...{ from: "2025-03", to: "2025-03", tripsPerDay: 8, seed: 5, source: "lbs" },
    ...{ samplingS: 30, noiseM: 10 },
  });
  file = writeSimulation(sim.trips(), join(dir, "traces")).months[0].traces;
  await ctx.store.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function contextOf(name: string): Promise<AppContext> {
  const store = new SqliteStore(join(dir, `${name}.sqlite`));
  await store.network.replaceCountry(
    { country: "mc", source: "test", segmentCount: segments.length, importedAt: new Date().toISOString() },
    segments,
  );
  return { store, networks: storeNetworks(store.network) };
}

/** Claims and runs ingest chunk jobs until stopped, as a worker process's runner does. */
function jobLoop(ctx: AppContext, { asEarlierVersion = false } = {}): { stop: () => Promise<number> } {
  const jobs = new IngestChunkJobs(ctx, 1);
  let stopping = false;
  let ran = 0;
  const runner = {
    queue: ctx.store.jobs,
    workerId: "test-worker",
    leaseMs: 60_000,
    heartbeatMs: 20_000,
    maxAttempts: 3,
    log: () => {},
    stopping: () => false,
    handBack: async (job: Job) => void (await ctx.store.jobs.release(job.id, runner.workerId)),
  };
  const loop = (async () => {
    while (!stopping) {
      const job = await ctx.store.jobs.claim(runner.workerId, runner.leaseMs);
      if (!job) await new Promise((r) => setTimeout(r, 10));
      else {
        // A worker of the version before chunks ran on across files knows no parts.
        if (asEarlierVersion) delete (job.payload as IngestChunkPayload).parts;
        await jobs.run(job, runner);
        ran++;
      }
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      await jobs.close();
      return ran;
    },
  };
}

const common = { country: "mc", source: "lbs", vehicleClass: "personal" } as const;

/** What ingestFiles reports and stores of `files` in one process, in a store of its own. */
async function ingestedInOneProcess(name: string, files: string[]) {
  const single = await contextOf(name);
  const reference = await ingestFiles(single, files, {
    ...common,
    matcher: tripMatcher((await single.networks.get("mc"))!),
  });
  const expected = await storeDigest(single.store, "mc");
  await single.store.close();
  return { reference, expected };
}

it("chunks stored by a worker give ingestFiles' report and stored data", async () => {
  const { reference, expected } = await ingestedInOneProcess("single", [file]);

  const ctx = await contextOf("chunked");
  const worker = jobLoop(ctx);
  const lines: string[] = [];
  const chunkTrips = Math.max(1, Math.floor(reference.totals.trips / (MAX_OUTSTANDING_CHUNKS + 8)));
  const report = await ingestFilesInChunks(ctx, [file], {
    ...common,
    chunkTrips,
    pollMs: 5,
    onProgress: (line) => lines.push(line),
  });
  const ran = await worker.stop();
  assert.ok(report.chunks > MAX_OUTSTANDING_CHUNKS, `more chunks (${report.chunks}) than may wait at once`);
  assert.equal(ran, report.chunks);
  assert.deepEqual(report.failedChunks, []);
  assert.deepEqual(report.totals, reference.totals);
  assert.deepEqual(report.problems, reference.problems);
  assert.deepEqual(await storeDigest(ctx.store, "mc"), expected);
  assert.equal((await ctx.store.trips.listIngestRuns("mc")).length, 1, "the file is recorded as ingested");
  assert.ok(
    lines.includes(
      `chunks: ${report.chunks}/${report.chunks} done, ${report.totals.stored.toLocaleString("en-US")} trips stored`,
    ),
    lines.join("\n"),
  );
  assert.deepEqual(await ctx.store.jobs.claim("anyone", 1000), null, "no job left");
  await ctx.store.close();
});

// A month as daily files: chunks run on from one file into the next (as ingestFiles' batches do), and each
// file still gets its own counts, from the parts of the chunks its trips went into.
it("chunks across daily files give ingestFiles' report per file and its stored data", async () => {
  const days = inDayFiles(file, 7);
  const { reference, expected } = await ingestedInOneProcess("days-single", days);

  const ctx = await contextOf("days-chunked");
  const worker = jobLoop(ctx);
  const chunkTrips = 30;
  const report = await ingestFilesInChunks(ctx, days, { ...common, chunkTrips, pollMs: 5 });
  await worker.stop();
  const perFile = reference.files.map((f) => Math.ceil(f.counts.trips / chunkTrips));
  assert.equal(report.chunks, Math.ceil(reference.totals.trips / chunkTrips), "chunks span files");
  assert.ok(report.chunks < perFile.reduce((a, b) => a + b), "fewer chunks than one run per file");
  assert.deepEqual(report.failedChunks, []);
  assert.deepEqual(report.files, reference.files);
  assert.deepEqual(report.problems, reference.problems);
  assert.deepEqual(await storeDigest(ctx.store, "mc"), expected);
  const runs = await ctx.store.trips.listIngestRuns("mc");
  assert.deepEqual(
    runs.map((r) => [r.path, r.counts]),
    reference.files.map((f) => [f.path, f.counts]),
    "every file recorded, with its counts",
  );
  await ctx.store.close();
});

it("a chunk of several files stored by a worker of the version before: the same data, the report says so", async () => {
  const days = inDayFiles(file, 7);
  const { reference, expected } = await ingestedInOneProcess("days-single-earlier", days);
  const ctx = await contextOf("days-earlier-worker");
  const worker = jobLoop(ctx, { asEarlierVersion: true });
  const report = await ingestFilesInChunks(ctx, days, { ...common, chunkTrips: 30, pollMs: 5 });
  await worker.stop();
  assert.deepEqual(report.totals, reference.totals);
  assert.deepEqual(await storeDigest(ctx.store, "mc"), expected);
  assert.ok(
    report.problems.some((p) =>
      /^chunk \d+: its worker \(an earlier version\) counted its 2 files' trips together, all under .*-part\d\.csv$/.test(
        p,
      ),
    ),
    report.problems.join("\n"),
  );
  await ctx.store.close();
});

/** The files (by place) with trips in chunk `seq`, given each file's trips in reading order. */
function filesInChunk(tripsPerFile: number[], chunkTrips: number, seq: number): number[] {
  const [from, to] = [seq * chunkTrips, (seq + 1) * chunkTrips];
  let start = 0;
  return tripsPerFile.flatMap((trips, file) => {
    const [first, end] = [start, (start += trips)];
    return trips > 0 && first < to && end > from ? [file] : [];
  });
}

/** Makes storing chunk `seq` fail at its commit, as a store error would: its transaction rolls back. */
function failStoringChunk(ctx: AppContext, seq: number, message: string): void {
  const chunks = ctx.store.ingestChunks;
  const markDone = chunks.markDone.bind(chunks);
  chunks.markDone = async (ingestId, at, result) => {
    if (at === seq) throw new Error(message);
    return markDone(ingestId, at, result);
  };
}

// A file with trips in a chunk that failed is not whole: recording it would say it was ingested when part
// of it is missing. A chunk spanning two files fails, so both stay unrecorded; every other file is recorded.
it("a chunk that fails: the files with trips in it are not recorded as ingested, the others are", async () => {
  const days = inDayFiles(file, 7);
  const { reference } = await ingestedInOneProcess("failing-single", days);
  const chunkTrips = 30;
  const tripsPerFile = reference.files.map((f) => f.counts.trips);
  const chunks = Math.ceil(reference.totals.trips / chunkTrips);
  const failing = Array.from({ length: chunks }, (_, seq) => seq).find(
    (seq) => filesInChunk(tripsPerFile, chunkTrips, seq).length > 1,
  )!;
  const unwhole = filesInChunk(tripsPerFile, chunkTrips, failing);

  const ctx = await contextOf("failing-chunked");
  failStoringChunk(ctx, failing, "disk I/O error");
  const worker = jobLoop(ctx);
  const report = await ingestFilesInChunks(ctx, days, { ...common, chunkTrips, pollMs: 5 });
  await worker.stop();

  assert.deepEqual(report.failedChunks, [`chunk ${failing + 1}: disk I/O error`]);
  const runs = await ctx.store.trips.listIngestRuns("mc");
  const whole = reference.files.filter((_, i) => !unwhole.includes(i));
  assert.ok(whole.length > 0 && unwhole.length === 2, `files recorded and not: ${whole.length}, ${unwhole}`);
  assert.deepEqual(
    runs.map((r) => [r.path, r.counts]),
    whole.map((f) => [f.path, f.counts]),
    "only the files whose chunks all were stored are recorded, with their counts",
  );
  const stored = (await storeDigest(ctx.store, "mc")).trips;
  assert.equal(stored, report.totals.stored, "the report counts what is stored");
  assert.ok(stored < reference.totals.stored, "the failed chunk's trips are not stored");
  await ctx.store.close();
});
