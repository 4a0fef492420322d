/**
 * What a segment-month in parts costs a metrics call on the cells' path (day types and parts other than
 * "all", and the detail fields): `npm run bench -- counts-parts [segments=1000] [batches=31]`.
 * One month of random cells over `segments` segments, stored three ways: in one batch (one row per
 * segment-month), in `batches` batches as daily ingests store it (counts.ts, "Parts": log2 of the batches
 * plus one parts at most), and those batches compacted by a first batch into the next month. Each is asked
 * the same weekday-peak question for every segment, without and with the detail fields: the store's CPU
 * milliseconds per call (median of 41), and the ratio to one row. The rollups' path (day type and part
 * "all") reads one row per segment-year however the months are stored (`counts` bench).
 */
import Database from "better-sqlite3";
import { cpuUsage } from "node:process";
import { loadavg } from "node:os";
import type { SegmentStatsQuery } from "../src/app/ports/store.js";
import { Rng } from "../src/engine/simulate/rng.js";
import { SEGMENT_COUNT_CLASSES } from "../src/engine/trips/codes.js";
import { TRACE_SOURCES } from "../src/engine/trips/types.js";
import { SqliteSegmentStats } from "../src/store/sqlite/counts.js";
import { migrate } from "../src/store/sqlite/migrations.js";
import { randomCells } from "../test/helpers/random-cells.js";

const MONTH = "2025-01";
const CELLS_PER_SEGMENT = 200;
const RUNS = 41;

export default async function countsPartsBench(args: string[]): Promise<Record<string, unknown>> {
  const [segments = 1000, batches = 31] = args.map(Number);
  const ids = Array.from({ length: segments }, (_, i) => i + 1);
  const rng = new Rng(1, "counts-parts");
  const over = { segments: ids, months: [MONTH], speeds: "exact" as const, detailed: true };
  const cells = randomCells(rng, segments * CELLS_PER_SEGMENT, over);
  const nextMonth = randomCells(rng, 10, { ...over, months: ["2025-02"] });
  const oneRow = storedIn(cells, 1);
  const inParts = storedIn(cells, batches);
  const compacted = storedIn(cells, batches);
  compacted.stats.add("mc", nextMonth);
  const q: SegmentStatsQuery = {
    country: "mc",
    segmentIds: ids,
    months: [MONTH],
    daysOfWeek: [1, 2, 3, 4, 5],
    hours: [7, 8, 9],
    directions: ["with", "against"],
    vehicleClasses: SEGMENT_COUNT_CLASSES,
    sources: TRACE_SOURCES,
  };
  const timed = ({ stats }: Stored) => ({
    totalsMs: cpuMs(stats, { ...q, details: false }),
    detailsMs: cpuMs(stats, q),
  });
  const [one, parts, merged] = [oneRow, inParts, compacted].map(timed);
  const ratio = (of: typeof one) => ({
    totals: round(of.totalsMs / one.totalsMs),
    details: round(of.detailsMs / one.detailsMs),
  });
  return {
    month: `${segments} segments, ${cells.length} random cells`,
    batches,
    rowsPerSegmentMonth: {
      oneBatch: oneRow.rowsPerSegmentMonth(),
      inParts: inParts.rowsPerSegmentMonth(),
      compacted: compacted.rowsPerSegmentMonth(),
    },
    oneRow: one,
    inParts: { ...parts, ratio: ratio(parts) },
    compacted: { ...merged, ratio: ratio(merged) },
    loadAvg1m: round(loadavg()[0]),
  };
}

interface Stored {
  stats: SqliteSegmentStats;
  rowsPerSegmentMonth(): number;
}

/** The cells added in `batches` batches of about equal size to a new in-memory store. */
function storedIn(cells: Parameters<SqliteSegmentStats["add"]>[1], batches: number): Stored {
  const db = new Database(":memory:");
  migrate(db);
  const stats = new SqliteSegmentStats(db);
  const size = Math.ceil(cells.length / batches);
  for (let at = 0; at < cells.length; at += size) stats.add("mc", cells.slice(at, at + size));
  const count = (sql: string) => db.prepare(sql).pluck().get(MONTH) as number;
  return {
    stats,
    rowsPerSegmentMonth: () =>
      round(
        count("SELECT COUNT(*) FROM segment_month_totals WHERE month = ?") /
          count("SELECT COUNT(DISTINCT segment_id) FROM segment_month_totals WHERE month = ?"),
      ),
  };
}

/** The median CPU milliseconds of one call, after one untimed. */
function cpuMs(stats: SqliteSegmentStats, q: SegmentStatsQuery): number {
  stats.query(q);
  const ms: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const before = cpuUsage();
    stats.query(q);
    const used = cpuUsage(before);
    ms.push((used.user + used.system) / 1000);
  }
  return round(ms.sort((a, b) => a - b)[RUNS >> 1]);
}

const round = (x: number) => Number(x.toFixed(2));
