/**
 * What a daily batch of segment counts costs the store late in a year: `npm run bench -- counts-batches
 * [segments=5000] [batches=6]`. Random cells over `segments` segments: `batches` batches of 40,000 cells
 * (about a day of Monaco's tallies per segment) into January of an empty year, and into December after
 * eleven months stored, one batch each. Wall milliseconds per batch (in-memory SQLite), and the ratio of
 * December's median to January's, leaving out each month's first batch, which compacts the months before.
 * Before rollups were kept in parts, every batch rewrote each touched segment-year's whole rollup, which
 * grows by a month's entries each month (counts.ts, "Parts"). Since stop 53 a batch's rollup entries ride on
 * its totals' parts until compaction, so `rollupMB`, the year table's size, holds the compacted months only.
 */
import Database from "better-sqlite3";
import { loadavg } from "node:os";
import { Rng } from "../src/engine/simulate/rng.js";
import { SqliteSegmentStats } from "../src/store/sqlite/counts.js";
import { migrate } from "../src/store/sqlite/migrations.js";
import { randomCells } from "../test/helpers/random-cells.js";

const CELLS_PER_MONTH = 150_000;
const CELLS_PER_BATCH = 40_000;

export default async function countsBatchesBench(args: string[]): Promise<Record<string, unknown>> {
  const [segments = 5000, batches = 6] = args.map(Number);
  const ids = Array.from({ length: segments }, (_, i) => i + 1);
  const rng = new Rng(2, "counts-batches");
  const cellsOf = (month: string, n: number) =>
    randomCells(rng, n, { segments: ids, months: [month], speeds: "exact", detailed: true });
  const run = (monthsBefore: number, month: string) => {
    const db = new Database(":memory:");
    migrate(db);
    const stats = new SqliteSegmentStats(db);
    for (let m = 1; m <= monthsBefore; m++)
      stats.add("mc", cellsOf(`2025-${String(m).padStart(2, "0")}`, CELLS_PER_MONTH));
    const days = Array.from({ length: batches }, () => cellsOf(month, CELLS_PER_BATCH));
    const ms = days.map((cells) => {
      const started = process.hrtime.bigint();
      stats.add("mc", cells);
      return Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    });
    const rollupMB = db
      .prepare("SELECT SUM(length(cells)) FROM segment_year_rollups")
      .pluck()
      .get() as number;
    db.close();
    return { ms, rollupMB: Number((rollupMB / 1e6).toFixed(1)) };
  };
  const january = run(0, "2025-01");
  const december = run(11, "2025-12");
  const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[ms.length >> 1];
  return {
    segments,
    january,
    december,
    decemberOverJanuary: Number((median(december.ms.slice(1)) / median(january.ms.slice(1))).toFixed(2)),
    loadAvg1m: Number(loadavg()[0].toFixed(2)),
  };
}
