import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, type RunningServer } from "../helpers/server.js";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/** The ```sh blocks of the README's "Using the API" section, in order (the quick start is not run). */
export function apiExamples(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf("## Using the API"), markdown.indexOf("## Command line"));
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/**
 * Runs the blocks as one bash script from a directory whose `var` is the server's data directory, as a user
 * who just ran `npm start` would. `curl` fails on any HTTP error, so a 4xx stops the script.
 */
function runExamples(blocks: string[], cwd: string, baseUrl: string): Promise<{ code: number; out: string }> {
  const script = [
    "set -euo pipefail",
    'curl() { command curl --fail-with-body --show-error "$@"; }',
    ...blocks,
  ]
    .join("\n")
    .replaceAll("http://localhost:8080", baseUrl);
  return new Promise((resolve) => {
    // Bounded: the analysis example waits for Data Available, which must not hang the suite.
    const child = spawn("bash", ["-c", script], { cwd, timeout: 300_000 });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code: code ?? -1, out }));
  });
}

/** Like the browser tests: without jq the examples are skipped with a message, except under CI. */
function jqSkip(): string | false {
  if (spawnSync("jq", ["--version"]).status === 0) return false;
  if (process.env.CI) throw new Error("CI needs jq for the README's examples (apt-get install -y jq)");
  return "no jq: apt-get install -y jq to run the README's examples";
}

describe("README: the API examples run top to bottom against a fresh demo server", { skip: jqSkip() }, () => {
  let server: RunningServer;
  let home: string;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), "streetflow-readme-"));
    server = await startServer([], join(home, "var"));
  });
  after(async () => {
    await server?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("finds the examples", () => {
    const blocks = apiExamples(readFileSync(README, "utf8"));
    assert.ok(blocks.length >= 8, `only ${blocks.length} sh blocks`);
    assert.ok(blocks.some((b) => b.includes("/api/v2/analyses/download/")));
  });

  it("runs every example without an HTTP error, and they leave what they describe", async () => {
    const { code, out } = await runExamples(apiExamples(readFileSync(README, "utf8")), home, server.baseUrl);
    assert.equal(code, 0, out);
    // The analysis' CSV came back with rows, the gates set was made from real OSM ids, and the counts had data.
    assert.match(out, /origin_zone_id|origin/i);
    assert.match(out, /"name":"Gates","status":"success"/);
    assert.match(out, /"trips_volume"|trips_volume/);
    // The README's own cleanup ran: the analysis and the districts set are gone, the gates remain.
    const key = readFileSync(join(home, "var", "demo-api-key.txt"), "utf8").trim();
    const sets = (await (await fetch(`${server.baseUrl}/api/v2/zone_sets?key=${key}`)).json()) as {
      data?: unknown;
    };
    const listed = JSON.stringify(sets);
    assert.ok(listed.includes("Gates") && !listed.includes("Monaco districts"), listed);
  });
});
