import { collect } from "../helpers/collect.js";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseFile } from "../../src/config/config.js";
import { parseGroundTruthLine, type GroundTruthTrip } from "../../src/engine/simulate/index.js";
import { columnsToTrips } from "../../src/engine/trips/columns.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { runCli, startServer, type RunningServer } from "../helpers/server.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

/** Runs a CLI command that must succeed; its stdout. */
async function cli(dataDir: string, args: string[]): Promise<string> {
  const r = await runCli(dataDir, args);
  assert.equal(r.code, 0, `streetflow ${args.join(" ")} failed:\n${r.stderr}`);
  return r.stdout;
}

/** The ground-truth trip of the device that was under way when a stored trip started. */
function truthOf(trip: MatchedTrip, byDevice: Map<string, GroundTruthTrip[]>): GroundTruthTrip | undefined {
  return byDevice.get(trip.deviceId)?.find((t) => t.startT <= trip.startT && trip.startT <= t.endT);
}

/**
 * The whole trip-data path over real processes: import the Monaco network,
 * simulate a month of traces, ingest them with the HMM matcher, serve the
 * stored data periods. Each step is the CLI a user runs.
 */
describe("import-osm → simulate → ingest → serve (real processes)", () => {
  let dataDir: string;
  let simDir: string;
  let truth: GroundTruthTrip[];
  let ingestOutput: string;
  let server: RunningServer | undefined;
  let key: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sf-pipeline-"));
    simDir = join(dataDir, "sim");
    await cli(dataDir, ["import-osm", MONACO_PBF, "--country", "mc"]);
    await cli(dataDir, [
      ...["simulate", "--country", "mc", "--from", "2025-03", "--to", "2025-03"],
      ...["--trips-per-day", "20", "--seed", "7", "--out", simDir, "--source", "lbs"],
    ]);
    truth = readFileSync(join(simDir, "ground-truth-2025-03.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map(parseGroundTruthLine);
    ingestOutput = await cli(dataDir, [
      ...["ingest", join(simDir, "traces-2025-03.csv"), "--country", "mc", "--source", "lbs"],
    ]);
    await cli(dataDir, ["org", "create", "pipeline"]);
    key = (await cli(dataDir, ["key", "create", "--org", "pipeline"])).trim();
    server = await startServer(["--no-demo"], dataDir);
  });
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A count from the ingest report's "label: N" line. */
  const reported = (label: string) => {
    const m = new RegExp(`^${label}:\\s+([\\d,]+)`, "m").exec(ingestOutput);
    assert.ok(m, `no "${label}" in the ingest report:\n${ingestOutput}`);
    return Number(m[1].replace(/,/g, ""));
  };

  it("serves exactly March 2025 as the data period of the ingested month", async () => {
    const res = await fetch(`${server!.baseUrl}/api/v2/date_ranges/mc/All_Vehicles?key=${key}`);
    assert.equal(res.status, 200);
    const range = [{ start_date: "03/01/2025", end_date: "03/31/2025" }];
    assert.deepEqual(await res.json(), { date_ranges: { supports: range, default: range } });
  });

  it("splits the traces into the simulated trips and stores nearly all of them", () => {
    assert.ok(truth.length > 400, `a month of 20 trips a day: ${truth.length}`);
    // The generator leaves at least 12 min between a device's trips (above the 10-min gap rule) and no dwell
    // inside a trip, so every simulated trip closes as exactly one raw trip: kept or dropped by a stated rule.
    const dropped = /trips dropped:\s+(\d+) too few points, (\d+) under 200 m, (\d+) without duration/.exec(
      ingestOutput,
    );
    assert.ok(dropped, ingestOutput);
    const droppedTrips = Number(dropped[1]) + Number(dropped[2]) + Number(dropped[3]);
    // The splitter may still cut a rare trip in two at a dwell-like cluster of noisy fixes (seed 7: one
    // bicycle trip on 28 March, its first minute's phone fixes within 100 m); at most 0.5 % of the trips.
    const closed = reported("trips") + droppedTrips;
    assert.ok(
      closed >= truth.length && closed <= truth.length * 1.005,
      `${closed} raw trips for ${truth.length} simulated`,
    );
    assert.equal(reported("bad rows"), 0);
    // Stored may differ from truth: sparse lbs fixes (30 s mean) leave short trips with under 2 fixes or
    // under 200 m (dropped), and the matcher may split a trip where fixes leave the network or return
    // nothing. Measured (seed 7): 623 simulated, 4 dropped under 200 m, 620 raw trips (one simulated trip cut
    // in two). 3 % leaves room for such cases; a broken link (failed matching, lost rows) misses by far more.
    const stored = reported("stored");
    assert.ok(
      Math.abs(stored - truth.length) <= 0.03 * truth.length,
      `stored ${stored} vs ${truth.length} simulated`,
    );
  });

  it("stores each trip with the purpose and income band of its simulated trip", async () => {
    const store = new SqliteStore(databaseFile(dataDir));
    try {
      const trips = (await collect(store.trips.scan("mc"))).flatMap(columnsToTrips);
      assert.equal(trips.length, reported("stored"));
      const byDevice = new Map<string, GroundTruthTrip[]>();
      for (const t of truth) byDevice.set(t.deviceId, [...(byDevice.get(t.deviceId) ?? []), t]);
      const mismatches = trips.filter((trip) => {
        const t = truthOf(trip, byDevice);
        return !t || t.purpose !== trip.purpose || t.incomeBand !== trip.incomeBand;
      });
      assert.deepEqual(mismatches.slice(0, 3), []);
      assert.deepEqual(
        new Set(trips.map((t) => t.purpose)),
        new Set(truth.filter((t) => trips.some((s) => s.deviceId === t.deviceId)).map((t) => t.purpose)),
      );
    } finally {
      await store.close();
    }
  });
});
