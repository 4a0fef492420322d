import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { databaseFile } from "../../src/config/config.js";
import { mergedPackedRows } from "../../src/store/sqlite/counts.js";
import { runCli } from "../helpers/server.js";
import { tempDir } from "../helpers/temp-dir.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

const CLI = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));

async function cli(dataDir: string, args: string[]): Promise<string> {
  const r = await runCli(dataDir, args);
  assert.equal(r.code, 0, `streetflow ${args.join(" ")} failed:\n${r.stderr}`);
  return r.stdout;
}

/** Reads the store as another process would while the ingest writes it (WAL lets readers in). */
function query<T>(dataDir: string, sql: string): T[] {
  const db = new Database(databaseFile(dataDir), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

const storedTrips = (dataDir: string) =>
  query<{ n: number }>(dataDir, "SELECT COALESCE(SUM(trip_count), 0) AS n FROM trip_chunks")[0].n;

/** Every tally the ingest writes, in a comparable form. */
function tallies(dataDir: string) {
  const rows = (sql: string) => query<Record<string, unknown>>(dataDir, sql).map((r) => JSON.stringify(r));
  return {
    trips: storedTrips(dataDir),
    fingerprints: rows("SELECT COUNT(*) AS n FROM trip_fingerprints"),
    dayCounts: rows("SELECT * FROM trip_day_counts ORDER BY day, vehicle_class, source"),
    deviceDays: rows("SELECT COUNT(*) AS n FROM trip_device_days"),
    segmentTotals: mergedRows(dataDir, "segment_month_totals"),
    segmentDetails: mergedRows(dataDir, "segment_month_details"),
  };
}

/** A packed table's rows with each segment-month's parts merged: the batches of a resumed ingest fall otherwise. */
function mergedRows(dataDir: string, table: "segment_month_totals" | "segment_month_details"): string[] {
  const db = new Database(databaseFile(dataDir), { readonly: true });
  try {
    return [...mergedPackedRows(db, table)].map(([, segmentId, month, cells]) =>
      JSON.stringify({ segmentId, month, c: cells.toString("hex") }),
    );
  } finally {
    db.close();
  }
}

/**
 * `streetflow ingest` as a real process, stopped by SIGTERM while it stores batches: it ends the batch
 * in progress, says it was interrupted, exits 143, and leaves a store whose trips and tallies agree; the
 * same command run again completes it to exactly what an uninterrupted ingest stores.
 */
describe("streetflow ingest stopped by SIGTERM mid-file", () => {
  let dataDir: string;
  let cleanDir: string;
  let traces: string;
  const ingestArgs = () => ["ingest", traces, "--country", "mc", "--source", "lbs", "--batch-size", "5"];

  before(async () => {
    dataDir = tempDir("sf-ingest-stop-");
    await cli(dataDir, ["import-osm", MONACO_PBF, "--country", "mc"]);
    const simDir = join(dataDir, "sim");
    await cli(dataDir, [
      ...["simulate", "--country", "mc", "--from", "2025-03", "--to", "2025-03"],
      ...["--trips-per-day", "30", "--seed", "3", "--out", simDir, "--source", "lbs"],
    ]);
    traces = join(simDir, "traces-2025-03.csv");
    // The same network and traces, ingested without interruption, as the reference.
    cleanDir = tempDir("sf-ingest-ref-");
    cpSync(dataDir, cleanDir, { recursive: true });
    await cli(cleanDir, ingestArgs());
  });

  it("stores whole batches only, reports `interrupted`, exits 143; a re-run completes it", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, ...ingestArgs()], {
      env: { ...process.env, STREETFLOW_DATA_DIR: dataDir },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));

    // Wait until the first batches are in the store, then stop it in the middle of the file.
    while (storedTrips(dataDir) === 0) await new Promise((r) => setTimeout(r, 20));
    child.kill("SIGTERM");
    const code = await exited;

    assert.equal(code, 143, stderr);
    assert.match(stderr, /SIGTERM received: stopping after the batch in progress/);
    assert.match(stderr, /ingest interrupted by SIGTERM: every stored batch is complete/);
    assert.match(stdout, /^interrupted: +by SIGTERM/m);
    assert.doesNotMatch(stderr, /at .*\.ts:\d+/, "no stack trace");

    const partial = tallies(dataDir);
    const reference = tallies(cleanDir);
    assert.ok(partial.trips > 0 && partial.trips < reference.trips, "stopped mid-file");
    assert.deepEqual(partial.fingerprints, [JSON.stringify({ n: partial.trips })]);
    const dayTrips = partial.dayCounts.reduce(
      (sum, r) => sum + (JSON.parse(r) as { trips: number }).trips,
      0,
    );
    assert.equal(dayTrips, partial.trips, "per-day tallies hold exactly the stored trips");
    assert.equal(
      query(dataDir, "SELECT * FROM ingest_runs").length,
      0,
      "an interrupted file is not recorded as ingested",
    );

    const again = await runCli(dataDir, ingestArgs());
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stdout, /interrupted/);
    assert.match(again.stdout, new RegExp(`\\(${partial.trips.toLocaleString("en-US")} already stored\\)`));
    assert.deepEqual(tallies(dataDir), reference);
  });
});
