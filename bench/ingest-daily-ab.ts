/**
 * The `ingest-daily` month, this tree's ingest against another checkout's, in one process:
 * `npm run bench -- ingest-daily-ab OTHER_CHECKOUT [trips=40000] [months=3] [whole]`.
 *
 * On a machine whose speed drifts from process to process (the matcher alone over the daily month took 7.2–10.4 s
 * of CPU from run to run on 2026-12-01), two versions of the daily ingest compare only side by side. Each month,
 * both trees ingest the bench's 31 daily files (30 s sampling), one ingest per file on one thread, each into a
 * fresh store of its own (OTHER's `SqliteStore`, so its schema and pages), day by day in alternating order; the
 * matcher alone matches the day's raw trips once. Both ingests match with this tree's matcher, so the figures
 * compare what an ingest does besides matching. With `whole`, each month is one ingest of all 31 files instead.
 * The first month warms both trees up. Reports per month each tree's CPU, its share of the matcher and
 * `thisToOther`, the ratio of the two CPU sums; the tallies (`talliesSha1`) and the trips (a digest of the
 * sorted trips, as chunking may differ) must be the same. OTHER is a checkout with its dependencies (a
 * `git worktree` with a `node_modules` link) whose bench/ingest.ts has the helpers this one imports.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ingestFiles, type IngestFilesOptions } from "../src/app/ingest.js";
import type { AppContext } from "../src/app/context.js";
import { tripMatcher } from "../src/engine/matching/index.js";
import { columnsToTrips } from "../src/engine/trips/columns.js";
import type { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import * as thisBench from "./ingest.js";
import { round } from "./ingest.js";

type Ingest = typeof ingestFiles;
type Helpers = Pick<typeof thisBench, "runtimeWith" | "storedTalliesDigest">;

export default async function ingestDailyAbBench(args: string[]): Promise<Record<string, unknown>> {
  const [other, ...rest] = args;
  if (!other)
    throw new Error(
      "usage: npm run bench -- ingest-daily-ab OTHER_CHECKOUT [trips=40000] [months=3] [whole]",
    );
  const whole = rest.includes("whole");
  const [trips = 40000, months = 3] = rest.filter((a) => a !== "whole").map(Number);
  const root = resolve(other);
  const trees = {
    this: { ingest: ingestFiles, helpers: thisBench as Helpers },
    other: {
      ingest: ((await import(join(root, "src/app/ingest.ts"))) as { ingestFiles: Ingest }).ingestFiles,
      helpers: (await import(join(root, "bench/ingest.ts"))) as Helpers,
    },
  };
  const dir = mkdtempSync(join(tmpdir(), "sf-bench-daily-ab-"));
  try {
    const { segments, rt0, network, paths, rawByFile } = await thisBench.benchMonth(dir, trips, 30, 31);
    const matcher = tripMatcher(network);
    rawByFile.flat().forEach((trip) => matcher(trip));
    const opts: IngestFilesOptions = {
      country: "mc",
      source: "lbs",
      vehicleClass: "personal",
      matcher,
      threads: 1,
    };
    const units = whole
      ? [{ files: paths, raw: rawByFile.flat() }]
      : paths.map((p, d) => ({ files: [p], raw: rawByFile[d] }));
    const results = [];
    for (let m = 0; m < months; m++) {
      const open = async (name: keyof typeof trees) => ({
        ...(await trees[name].helpers.runtimeWith(join(dir, `${name}-${m}.sqlite`), segments)),
        networks: rt0.networks,
      });
      const stores = { this: await open("this"), other: await open("other") };
      const cpu = { alone: 0, this: 0, other: 0 };
      for (const [u, unit] of units.entries()) {
        cpu.alone += (await thisBench.measured(async () => unit.raw.forEach((trip) => matcher(trip)))).cpuS;
        for (const name of (u + m) % 2 === 0 ? (["this", "other"] as const) : (["other", "this"] as const))
          cpu[name] += (
            await thisBench.measured(() => trees[name].ingest(stores[name], unit.files, opts))
          ).cpuS;
      }
      const stored = async (name: keyof typeof trees) => ({
        tallies: trees[name].helpers.storedTalliesDigest(stores[name].store as SqliteStore).slice(0, 12),
        trips: await sortedTripsDigest(stores[name]),
      });
      const digests = { this: await stored("this"), other: await stored("other") };
      await Promise.all([stores.this.store.close(), stores.other.store.close()]);
      results.push({
        matcherCpuS: round(cpu.alone),
        thisCpuS: round(cpu.this),
        otherCpuS: round(cpu.other),
        thisShare: round(cpu.alone / cpu.this),
        otherShare: round(cpu.alone / cpu.other),
        thisToOther: Number((cpu.this / cpu.other).toFixed(3)),
        sameStored: JSON.stringify(digests.this) === JSON.stringify(digests.other),
        ...digests.this,
      });
    }
    return {
      month: `${trips} simulated lbs trips in 31 daily files, 30 s sampling, ${whole ? "one ingest" : "one ingest per file"}`,
      otherCheckout: root,
      months: results,
      loadAvg1m: round(loadavg()[0]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SHA-1 over the stored trips of the country, sorted: the same trips however they are chunked. */
async function sortedTripsDigest(rt: AppContext): Promise<string> {
  const trips: string[] = [];
  for await (const chunk of rt.store.trips.scan("mc", {}))
    for (const trip of columnsToTrips(chunk)) trips.push(JSON.stringify(trip));
  return `${createHash("sha1").update(trips.sort().join("\n")).digest("hex").slice(0, 12)}/${trips.length}`;
}
