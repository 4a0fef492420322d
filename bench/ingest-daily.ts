/**
 * A month of daily exports ingested as they come, one ingest per file into the same store:
 * `npm run bench -- ingest-daily [trips=40000] [samplingS=30] [files=31] [threads=2]`.
 * The `ingest` bench's month (`ingest 40000 30 2 3 31`) hands all the files to one ingest, whose
 * batches run on across files; a planner loading each day's export on its day makes one ingest per
 * file instead, and each one adds to the month's tallies stored so far. Before each day's ingest, the
 * matcher alone matches that day's raw trips, so every day has its `ingestShareOfMatcher` (the matcher's
 * CPU over the ingest's, as in the `ingest` bench); the figures are summed per week. One untimed month
 * first (V8 compiled, route balls filled), then the month on one thread and, with `threads` > 1, the
 * month again with `threads` as the CLI's `--threads` gives it: each ingest starts and stops workers of its
 * own when its file is large enough to repay them (`WORKERS_FROM_BYTES`), else matches on the main thread
 * (`wallSpeedup`: the ratio of the two months' summed wall times). `storeS` is the wall time of a day's
 * store transactions; `talliesMB` what the month's packed tallies hold at the end. The stored trips and
 * tallies must be the same in both months; the tallies are also those of the `ingest` bench's month in
 * one ingest (`talliesSha1`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ingestFiles } from "../src/app/ingest.js";
import { tripMatcher } from "../src/engine/matching/index.js";
import type { Segment } from "../src/engine/network/types.js";
import type { TripMatcher } from "../src/engine/ingest/pipeline.js";
import type { RawTrip } from "../src/engine/trips/types.js";
import type { AppContext } from "../src/app/context.js";
import type { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import {
  benchMonth,
  measured,
  round,
  runtimeWith,
  storedDigest,
  storedTalliesDigest,
  timedTransactions,
} from "./ingest.js";

export default async function ingestDailyBench(args: string[]): Promise<Record<string, unknown>> {
  const [trips = 40000, samplingS = 30, files = 31, threads = 2] = args.map(Number);
  const dir = mkdtempSync(join(tmpdir(), "sf-bench-daily-"));
  try {
    const month = await benchMonth(dir, trips, samplingS, files);
    const { segments, rt0, network, written, paths, rawByFile: rawByDay } = month;
    const matcher = tripMatcher(network);
    rawByDay.flat().forEach((trip) => matcher(trip));
    const daily = new DailyMonth(dir, segments, rt0.networks, paths, rawByDay, matcher);

    await daily.run(1);
    const single = await daily.run(1);
    const parallel = threads > 1 ? await daily.run(threads) : undefined;
    const weeks = weeksOf(single.days.length);
    const byWeek = (days: Day[]) => weeks.map(([from, to]) => days.slice(from, to));
    const singleWeeks = byWeek(single.days);
    const share = (days: Day[]) => round(sum(days, (d) => d.matcherCpuS) / sum(days, (d) => d.ingestCpuS));
    const perCall = (of: (d: Day) => number) => singleWeeks.map((days) => round(sum(days, of) / days.length));
    const wallRatio = (one: Day[], more: Day[]) =>
      round(sum(one, (d) => d.ingestWallS) / sum(more, (d) => d.ingestWallS));
    return {
      network: `Monaco, ${segments.length} segments`,
      month: `${written.trips} simulated lbs trips, ${written.points} points, ${samplingS} s sampling`,
      files: paths.length,
      rawTrips: rawByDay.reduce((n, day) => n + day.length, 0),
      ingestShareOfMatcher: {
        month: share(single.days),
        perWeek: singleWeeks.map(share),
        perDay: single.days.map((d) => round(d.matcherCpuS / d.ingestCpuS)),
      },
      ingestCpuSPerCall: perCall((d) => d.ingestCpuS),
      matcherCpuSPerCall: perCall((d) => d.matcherCpuS),
      storeSPerCall: perCall((d) => d.storeS),
      talliesMB: single.talliesMB,
      ...(parallel && {
        wallSpeedup: {
          threads: `1 -> ${threads}, as --threads`,
          month: wallRatio(single.days, parallel.days),
          perWeek: byWeek(parallel.days).map((days, w) => wallRatio(singleWeeks[w], days)),
        },
      }),
      sameTripsStored: parallel === undefined || parallel.tripsSha1 === single.tripsSha1,
      sameTalliesStored: parallel === undefined || parallel.talliesSha1 === single.talliesSha1,
      tripsSha1: single.tripsSha1.slice(0, 12),
      talliesSha1: single.talliesSha1.slice(0, 12),
      loadAvg1m: round(loadavg()[0]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Day {
  matcherCpuS: number;
  ingestCpuS: number;
  ingestWallS: number;
  storeS: number;
}

/** The month's daily files ingested one by one into a fresh store, with the warm network of the set-up. */
class DailyMonth {
  private runs = 0;

  constructor(
    private readonly dir: string,
    private readonly segments: Segment[],
    private readonly networks: AppContext["networks"],
    private readonly paths: string[],
    private readonly rawByDay: RawTrip[][],
    private readonly matcher: TripMatcher,
  ) {}

  async run(threads: number) {
    const rt = {
      ...(await runtimeWith(join(this.dir, `month-${this.runs++}.sqlite`), this.segments)),
      networks: this.networks,
    };
    const store = timedTransactions(rt.store);
    const days: Day[] = [];
    for (const [d, path] of this.paths.entries()) {
      const alone = await measured(async () => this.rawByDay[d].forEach((trip) => this.matcher(trip)));
      store.seconds = 0;
      const ingest = await measured(() =>
        ingestFiles(rt, [path], {
          country: "mc",
          source: "lbs",
          vehicleClass: "personal",
          matcher: this.matcher,
          threads,
        }),
      );
      days.push({
        matcherCpuS: alone.cpuS,
        ingestCpuS: ingest.cpuS,
        ingestWallS: ingest.wallS,
        storeS: store.seconds,
      });
    }
    const sqlite = rt.store as SqliteStore;
    const result = {
      days,
      tripsSha1: await storedDigest(rt),
      talliesSha1: storedTalliesDigest(sqlite),
      talliesMB: round(talliesBytes(sqlite) / 1e6),
    };
    await rt.store.close();
    return result;
  }
}

/** The packed tallies' BLOBs of the month, totals and details. */
function talliesBytes(store: SqliteStore): number {
  const bytes = (table: string) =>
    (store.db.prepare(`SELECT COALESCE(SUM(length(cells)), 0) AS n FROM ${table}`).get() as { n: number }).n;
  return bytes("segment_month_totals") + bytes("segment_month_details");
}

/** Day ranges [from, to) of whole weeks, the last one holding what is left. */
function weeksOf(days: number): [number, number][] {
  const weeks: [number, number][] = [];
  for (let from = 0; from < days; from += 7) weeks.push([from, Math.min(days, from + 7)]);
  return weeks;
}

const sum = <T>(items: T[], of: (item: T) => number) => items.reduce((n, item) => n + of(item), 0);
