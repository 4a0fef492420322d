/**
 * The storage backends side by side: `npm run bench -- store-backends [trips=20000]`.
 * The same synthetic work on the embedded SQLite store (a temp file) and on the PostgreSQL store
 * (a temp database on STREETFLOW_BENCH_DATABASE_URL, default the local server): appending matched
 * trips in batches of 1,000 (dedupe, chunks, day tallies), scanning them back, adding segment cells
 * for 1,000 segments × 12 months, and the counts store query over them (1,000 segments × 12 months,
 * every day and hour, with details), as /counts/v1/metrics runs it. Reports each figure per backend
 * and the PostgreSQL / SQLite ratio, measured in one run, with the load average.
 */
import { rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { SEGMENT_COUNT_CLASSES } from "../src/engine/trips/codes.js";
import type { MatchedTrip } from "../src/engine/trips/types.js";
import type { SegmentStatCell } from "../src/engine/counts/segment-stats.js";
import type { Store } from "../src/app/ports/store.js";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { randomOf } from "./lib/synthetic.js";

const ADMIN_URL = process.env.STREETFLOW_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const BATCH = 1000;
const SEGMENTS = 1000;
const MONTHS = Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, "0")}`);
const QUERY_REPEATS = 9;

function syntheticTrips(count: number): MatchedTrip[] {
  const random = randomOf(11);
  return Array.from({ length: count }, (_, i) => {
    const startT = Date.UTC(2025, 0, 1) + Math.floor(random() * 364 * 86_400_000);
    const path = Array.from({ length: 20 }, (_, k) => ({
      segmentId: 1 + Math.floor(random() * SEGMENTS),
      forward: random() < 0.5,
      enterT: startT + k * 30_000,
      exitT: startT + (k + 1) * 30_000,
    }));
    return {
      deviceId: `device-${i % 5000}`,
      vehicleClass: "personal",
      source: "lbs",
      origin: [9.5 + random() / 10, 47.1 + random() / 10],
      destination: [9.5 + random() / 10, 47.1 + random() / 10],
      startT,
      endT: startT + 600_000,
      lengthM: 5000,
      path,
    };
  });
}

function syntheticCells(): SegmentStatCell[] {
  const random = randomOf(12);
  const cells: SegmentStatCell[] = [];
  for (let segmentId = 1; segmentId <= SEGMENTS; segmentId++)
    for (const month of MONTHS)
      for (let k = 0; k < 8; k++)
        cells.push({
          segmentId,
          month,
          dayOfWeek: 1 + Math.floor(random() * 7),
          hour: Math.floor(random() * 24),
          direction: random() < 0.5 ? "with" : "against",
          vehicleClass: SEGMENT_COUNT_CLASSES[0],
          source: "lbs",
          trips: 3,
          speedSumKph: 120,
          speedCount: 3,
          speedHistogram: [0, 0, 0, 0, 0, 0, 0, 0, 3],
          purposes: {},
          incomes: {},
        });
  return cells;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, digits = 1) => Number(x.toFixed(digits));

async function measure(store: Store, trips: MatchedTrip[], cells: SegmentStatCell[]) {
  let t = performance.now();
  for (let i = 0; i < trips.length; i += BATCH)
    await store.trips.appendTrips("li", trips.slice(i, i + BATCH));
  const appendMs = performance.now() - t;

  t = performance.now();
  let scanned = 0;
  for await (const chunk of store.trips.scan("li")) scanned += chunk.count;
  const scanMs = performance.now() - t;
  if (scanned !== trips.length) throw new Error(`scanned ${scanned} of ${trips.length} trips`);

  t = performance.now();
  for (let i = 0; i < cells.length; i += 10_000)
    await store.segmentStats.add("li", cells.slice(i, i + 10_000));
  const addCellsMs = performance.now() - t;

  const query = {
    country: "li",
    segmentIds: Array.from({ length: SEGMENTS }, (_, i) => i + 1),
    months: MONTHS,
    daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
    hours: Array.from({ length: 24 }, (_, h) => h),
    directions: ["with", "against"] as const,
    vehicleClasses: [...SEGMENT_COUNT_CLASSES],
    sources: ["lbs"],
  };
  const queryMs: number[] = [];
  for (let i = 0; i < QUERY_REPEATS; i++) {
    t = performance.now();
    const rows = await store.segmentStats.query(query);
    queryMs.push(performance.now() - t);
    if (rows.length !== SEGMENTS * MONTHS.length) throw new Error(`query gave ${rows.length} rows`);
  }
  return {
    append_ms_per_1000_trips: round((appendMs / trips.length) * 1000),
    scan_trips_per_s: Math.round(scanned / (scanMs / 1000)),
    add_cells_ms_per_10000: round((addCellsMs / cells.length) * 10_000),
    query_1000_segments_12_months_ms_p50: round(median(queryMs)),
  };
}

export default async function run(args: string[]) {
  const tripCount = Number(args[0] ?? 20_000);
  const trips = syntheticTrips(tripCount);
  const cells = syntheticCells();

  const file = join(tmpdir(), `streetflow-bench-${process.pid}.db`);
  const sqlite = new SqliteStore(file);
  const onSqlite = await measure(sqlite, trips, cells);
  await sqlite.close();
  rmSync(file, { force: true });
  for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });

  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const database = `streetflow_bench_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
  let onPostgres;
  try {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    const store = await PostgresStore.open(url.toString());
    onPostgres = await measure(store, trips, cells);
    await store.close();
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
  const ratio = Object.fromEntries(
    Object.entries(onPostgres).map(([k, v]) => [k, round(v / onSqlite[k as keyof typeof onSqlite], 2)]),
  );
  return {
    trips: tripCount,
    sqlite: onSqlite,
    postgres: onPostgres,
    postgres_over_sqlite: ratio,
    loadavg: loadavg().map((l) => round(l, 2)),
  };
}
