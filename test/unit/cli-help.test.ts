import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/server.js";

/** Words a sentence does not end on: a description ending on one was cut off. */
const DANGLING = /\b(the|a|an|of|to|and|or|in|on|for|with|by|from|country's)$/i;

describe("streetflow --help", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-help-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("describes every command in full", async () => {
    const { code, stdout } = await runCli(dir, ["--help"]);
    assert.equal(code, 0);
    const commands = stdout.slice(stdout.indexOf("Commands:") + "Commands:".length);
    // One entry per command: its first line starts at the indent, continuation lines are indented deeper.
    const entries = commands
      .split(/\n(?= {2}\S)/)
      .map((e) => e.replace(/\s+/g, " ").trim())
      .filter(Boolean);
    assert.ok(entries.length >= 10, commands);
    for (const entry of entries) assert.doesNotMatch(entry, DANGLING, `cut off: "${entry}"`);
    assert.ok(
      entries.some((e) => e.endsWith("replacing the country's network")),
      "import-osm says what it replaces",
    );
  });
});
