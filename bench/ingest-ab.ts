/**
 * This tree's whole ingest against another checkout's, in one process:
 * `npm run bench -- ingest-ab OTHER [trips=4000] [rounds=8] [uuid]`.
 *
 * On a machine whose speed drifts from process to process (one ingest took 2.1–3.3 s of CPU from run to run
 * on 2026-11-29), two versions of the ingest compare only in one process, their runs alternating. Both
 * trees' code is loaded side by side (OTHER is a checkout with its dependencies, e.g. a `git worktree` with
 * a `node_modules` link), each with its own network, matcher, pool of 2 matching threads and fresh SQLite
 * files, on the ingest bench's file (written by this tree, in a child process). Per round, in alternating
 * order per tree: the matcher alone over the file's raw trips, the single-thread ingest, the 2-thread ingest.
 * An untimed round warms both first. Reports per tree the medians, the share of the matcher (median of the
 * per-round ratios) and the 2-thread `wallSpeedup`; `thisToOther` are this tree's medians over the other's,
 * and the quartiles of the per-round ratios. Two identical trees differ by up to ~10 % in one run (each copy
 * of the code is compiled on its own): run it several times, both ways. With `uuid`, the file's device ids
 * are UUIDs (36 characters, as in real lbs exports) instead of the simulator's 11-character ones.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { measured as measure, median } from "./ingest.js";
import type { RawTrip } from "../src/engine/trips/types.js";

const HERE = fileURLToPath(new URL("..", import.meta.url));
const MONACO_PATH = "data/osm/monaco.osm.pbf";

interface Round {
  aloneCpuS: number;
  singleCpuS: number;
  singleWallS: number;
  parallelCpuS: number;
  parallelWallS: number;
  stored: number;
}

export default async function ingestAbBench(args: string[]): Promise<Record<string, unknown>> {
  const [other, ...rest] = args;
  if (!other)
    throw new Error("usage: npm run bench -- ingest-ab OTHER_CHECKOUT [trips=4000] [rounds=8] [uuid]");
  const uuids = rest.includes("uuid");
  const [trips = 4000, rounds = 8] = rest.filter((a) => a !== "uuid").map(Number);
  const dir = mkdtempSync(join(tmpdir(), "sf-bench-ingest-ab-"));
  try {
    const file = benchFileInChildProcess(trips, dir, uuids);
    const trees = {
      this: await treeRunner(HERE, file, dir, "this"),
      other: await treeRunner(resolve(other), file, dir, "other"),
    };
    const results: Record<keyof typeof trees, Round[]> = { this: [], other: [] };
    for (let r = 0; r <= rounds; r++)
      for (const name of r % 2 === 0 ? (["this", "other"] as const) : (["other", "this"] as const)) {
        const round = await trees[name].round();
        if (r > 0) results[name].push(round);
      }
    await Promise.all(Object.values(trees).map((t) => t.close()));
    const summary = { this: summarise(results.this), other: summarise(results.other) };
    return {
      file: `${trips} simulated lbs trips, 30 s sampling${uuids ? ", UUID device ids" : ""}`,
      otherCheckout: resolve(other),
      rounds,
      ...summary,
      thisToOther: {
        singleCpu: round2(summary.this.singleCpuS / summary.other.singleCpuS),
        parallelCpu: round2(summary.this.parallelCpuS / summary.other.parallelCpuS),
        aloneCpu: round2(summary.this.aloneCpuS / summary.other.aloneCpuS),
        // The same ratios per round (both trees ran in it), their median and quartiles: how far one comparison
        // can be trusted on this machine.
        singleCpuPerRound: quartiles(results.this.map((r, i) => r.singleCpuS / results.other[i].singleCpuS)),
        parallelCpuPerRound: quartiles(
          results.this.map((r, i) => r.parallelCpuS / results.other[i].parallelCpuS),
        ),
      },
      sameStored: results.this.every((r) => r.stored === results.other[0].stored),
      loadAvg1m: round2(loadavg()[0]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The ingest bench's file, written by another process (bench/lib/bench-trace-file.ts says why). */
function benchFileInChildProcess(trips: number, dir: string, uuids: boolean): string {
  const script = join(HERE, "bench", "lib", "bench-trace-file.ts");
  const args = [String(trips), "30", dir, ...(uuids ? ["uuid"] : [])];
  return execFileSync(process.execPath, [...process.execArgv, script, ...args], { encoding: "utf8" });
}

/** The lower quartile, median and upper quartile of `xs`. */
function quartiles(xs: number[]): { q1: number; median: number; q3: number } {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) => round2(sorted[Math.round(q * (sorted.length - 1))]);
  return { q1: at(0.25), median: at(0.5), q3: at(0.75) };
}

/** One tree's matcher and ingest, from that tree's own modules. */
async function treeRunner(root: string, file: string, dir: string, label: string) {
  // Typed as this tree's modules: the other tree's have the same exports (the bench needs no newer ones).
  const load = async <M>(path: string) => (await import(join(root, "src", path))) as M;
  const { readOsmSegments } = await load<typeof import("../src/engine/network/osm-import.js")>(
    "engine/network/osm-import.ts",
  );
  const { NetworkRegistry } = await load<typeof import("../src/engine/network/registry.js")>(
    "engine/network/registry.ts",
  );
  const { tripMatcher } =
    await load<typeof import("../src/engine/matching/index.js")>("engine/matching/index.ts");
  const { ingestFiles } = await load<typeof import("../src/app/ingest.js")>("app/ingest.ts");
  const { SqliteStore } = await load<typeof import("../src/store/sqlite/sqlite-store.js")>(
    "store/sqlite/sqlite-store.ts",
  );
  const { MatchPool } = await load<typeof import("../src/engine/ingest/match-pool.js")>(
    "engine/ingest/match-pool.ts",
  );
  const { readTrips } = await load<typeof import("../src/engine/ingest/split-file.js")>(
    "engine/ingest/split-file.ts",
  );
  const { TripSplitter } = await load<typeof import("../src/engine/ingest/split-trips.js")>(
    "engine/ingest/split-trips.ts",
  );
  const segments = await readOsmSegments(join(root, MONACO_PATH));
  let stores = 0;
  const runtime = async () => {
    const store = new SqliteStore(join(dir, `${label}-${stores++}.sqlite`));
    const imported = new Date().toISOString();
    await store.network.replaceCountry(
      { country: "mc", source: "bench", segmentCount: segments.length, importedAt: imported },
      segments,
    );
    return { store, networks: new NetworkRegistry(async (c: string) => await store.network.loadSegments(c)) };
  };
  const setup = await runtime();
  const network = (await setup.networks.get("mc"))!;
  const match = tripMatcher(network);
  const pool = new MatchPool(network, 2);
  const raw: RawTrip[] = [];
  const splitter = new TripSplitter({ source: "lbs", defaultVehicleClass: "personal" });
  for await (const closed of readTrips(file, splitter, {}, { badRows: 0, readErrors: 0, interrupted: 0 }))
    raw.push(...closed);
  const ingest = async (matchPool: InstanceType<typeof MatchPool> | undefined) => {
    // A fresh store each time, the warm network: its caches are those of a long-running ingest.
    const rt = { ...(await runtime()), networks: setup.networks };
    const timed = measure(async () =>
      ingestFiles(rt, [file], {
        country: "mc",
        source: "lbs",
        vehicleClass: "personal",
        matcher: match,
        matchPool,
      }),
    );
    const { value, cpuS, wallS } = await timed;
    await rt.store.close();
    return { cpuS, wallS, stored: value.totals.stored };
  };
  return {
    round: async (): Promise<Round> => {
      const alone = await measure(async () => raw.forEach(match));
      const single = await ingest(undefined);
      const parallel = await ingest(pool);
      return {
        aloneCpuS: alone.cpuS,
        singleCpuS: single.cpuS,
        singleWallS: single.wallS,
        parallelCpuS: parallel.cpuS,
        parallelWallS: parallel.wallS,
        stored: single.stored === parallel.stored ? single.stored : -1,
      };
    },
    close: async () => {
      await pool.close();
      await setup.store.close();
    },
  };
}

function summarise(rounds: Round[]) {
  const of = (pick: (r: Round) => number) => median(rounds.map(pick));
  return {
    aloneCpuS: of((r) => r.aloneCpuS),
    singleCpuS: of((r) => r.singleCpuS),
    parallelCpuS: of((r) => r.parallelCpuS),
    shareOfMatcher: of((r) => r.aloneCpuS / r.singleCpuS),
    wallSpeedup: of((r) => r.singleWallS / r.parallelWallS),
    singleCpuSPerRound: rounds.map((r) => round2(r.singleCpuS)),
  };
}

const round2 = (x: number) => Number(x.toFixed(2));
