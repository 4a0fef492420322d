import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { MONACO_PBF } from "../helpers/bundled-data.js";
import { simulateCommand } from "../../src/cli/simulate.js";
import { importNetwork } from "../../src/app/network-import.js";
import { openContext } from "../../src/main/runtime.js";
import { gridNetwork } from "../helpers/grid-network.js";

function cli(dataDir: string): Command {
  const program = new Command("streetflow")
    .option("--data-dir <dir>", "data directory", dataDir)
    .exitOverride();
  simulateCommand(program);
  return program;
}

test("simulate writes monthly traces and ground truth for an imported country, and refuses an unknown one", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sim-cli-"));
  const log = console.log;
  const lines: string[] = [];
  try {
    const rt = openContext(dir);
    const network = gridNetwork({ size: 6 });
    await rt.store.network.replaceCountry(
      { country: "zz", source: "grid", segmentCount: network.size, importedAt: "2025-01-01T00:00:00Z" },
      network.segments,
    );
    await rt.store.close();
    const out = join(dir, "out");
    const args = [
      "--country",
      "zz",
      "--from",
      "2025-02",
      "--to",
      "2025-03",
      "--trips-per-day",
      "5",
      "--seed",
      "3",
    ];
    console.log = (line: string) => lines.push(line);
    await cli(dir).parseAsync(["node", "streetflow", "simulate", ...args, "--out", out, "--source", "lbs"]);
    console.log = log;
    for (const month of ["2025-02", "2025-03"]) {
      assert.ok(existsSync(join(out, `traces-${month}.csv`)));
      assert.ok(readFileSync(join(out, `ground-truth-${month}.jsonl`), "utf8").includes('"source":"lbs"'));
    }
    assert.equal(lines.length, 3);
    assert.match(lines[2], /^simulated \d+ trips, \d+ points, \d+ devices .* 4 files in /);
    await assert.rejects(
      cli(dir).parseAsync(["node", "streetflow", "simulate", ...args, "--out", out, "--country", "xx"]),
      /no network for country xx/,
    );
  } finally {
    console.log = log;
    rmSync(dir, { recursive: true, force: true });
  }
});

test("simulate --transit-riders stores bus and rail riders with their walks on the imported transit layer", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sim-cli-transit-"));
  const log = console.log;
  const lines: string[] = [];
  try {
    const rt = openContext(dir);
    await importNetwork(rt, MONACO_PBF, "mc", () => {});
    await rt.store.close();
    const args = ["--country", "mc", "--from", "2025-02", "--to", "2025-02", "--trips-per-day", "2"];
    console.log = (line: string) => lines.push(line);
    const run = (riders: string) =>
      cli(dir).parseAsync([
        "node",
        "streetflow",
        "simulate",
        ...args,
        "--seed",
        "4",
        "--out",
        join(dir, "out"),
        "--transit-riders",
        riders,
      ]);
    await run("6");
    console.log = log;
    assert.match(lines.at(-1)!, /^stored \d+ transit rider trips .* on 10 bus lines and \d+ rail lines$/);
    const after = openContext(dir);
    const february = [{ year: 2025, month: 2 }];
    for (const mode of [["bus"], ["rail"], ["pedestrian"]])
      assert.deepEqual(await after.store.tripStats.monthsWithTrips("mc", mode), february, mode[0]);
    await after.store.close();
    await assert.rejects(run("0"), /--transit-riders must be positive/);
  } finally {
    console.log = log;
    rmSync(dir, { recursive: true, force: true });
  }
});
