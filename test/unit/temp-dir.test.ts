import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const HELPER = fileURLToPath(new URL("../helpers/temp-dir.ts", import.meta.url));

describe("test temp directories", () => {
  it("are removed, with their contents, when the test process exits", () => {
    // A separate process, as node --test runs each test file: it fills a directory and exits.
    const script = `
      const { tempDir } = await import(${JSON.stringify(HELPER)});
      const { mkdirSync, writeFileSync } = await import("node:fs");
      const dir = tempDir("streetflow-cleanup-");
      mkdirSync(dir + "/nested");
      writeFileSync(dir + "/nested/streetflow.db", "x".repeat(1000));
      console.log(dir);`;
    const dir = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    }).trim();
    assert.match(dir, /streetflow-cleanup-/);
    assert.equal(existsSync(dir), false);
  });
});
