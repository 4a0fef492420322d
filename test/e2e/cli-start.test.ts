import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runCli } from "../helpers/server.js";
import { tempDir } from "../helpers/temp-dir.js";

const REPORT = fileURLToPath(new URL("../helpers/report-cjs-modules.mjs", import.meta.url));

/** The packages of the CommonJS modules a CLI run loaded (what report-cjs-modules.mjs wrote). */
async function packagesLoaded(args: string[]): Promise<Set<string>> {
  const { code, stderr } = await runCli(tempDir("streetflow-cli-start-"), args, "", {
    NODE_OPTIONS: `--import=${REPORT}`,
    // The SQLite deployment: neither PostgreSQL nor Redis configured.
    STREETFLOW_DATABASE_URL: "",
    STREETFLOW_REDIS_URL: "",
  });
  assert.equal(code, 0, stderr);
  const line = stderr.split("\n").find((l) => l.startsWith("CJS_MODULES "));
  assert.ok(line, stderr);
  const paths = JSON.parse(line.slice("CJS_MODULES ".length)) as string[];
  return new Set(paths.map((p) => /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(p)?.[1] ?? ""));
}

describe("a command's start", () => {
  it("loads neither the HTTP stack nor the PostgreSQL and Redis clients unless it needs them", async () => {
    // They cost ~0.6 s of every command's start (docs/performance.md, "CLI start").
    const loaded = await packagesLoaded(["networks"]);
    assert.ok(loaded.has("better-sqlite3"), "the probe sees the modules the command does load");
    for (const pkg of ["fastify", "@fastify/static", "bullmq", "ioredis", "pg", "@mapbox/shp-write"])
      assert.ok(!loaded.has(pkg), `${pkg} was loaded`);
  });
});
