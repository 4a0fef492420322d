import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runCli, startServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp-dir.js";

const REPORT = fileURLToPath(new URL("../helpers/report-cjs-modules.mjs", import.meta.url));

/** The environment of a probed run: the SQLite deployment, neither PostgreSQL nor Redis configured. */
const PROBED = {
  NODE_OPTIONS: `--import=${REPORT}`,
  STREETFLOW_DATABASE_URL: "",
  STREETFLOW_REDIS_URL: "",
};

/** The packages of the CommonJS modules a process loaded, from the line report-cjs-modules.mjs wrote at its exit. */
function packagesIn(output: string): Set<string> {
  const line = output.split("\n").find((l) => l.startsWith("CJS_MODULES "));
  assert.ok(line, output);
  const paths = JSON.parse(line.slice("CJS_MODULES ".length)) as string[];
  return new Set(paths.map((p) => /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(p)?.[1] ?? ""));
}

/** The packages a CLI run loaded. */
async function packagesLoaded(args: string[]): Promise<Set<string>> {
  const { code, stderr } = await runCli(tempDir("streetflow-cli-start-"), args, "", PROBED);
  assert.equal(code, 0, stderr);
  return packagesIn(stderr);
}

describe("a command's start", () => {
  it("loads neither the HTTP stack nor the PostgreSQL and Redis clients unless it needs them", async () => {
    // They cost ~0.6 s of every command's start (docs/performance.md, "CLI start").
    const loaded = await packagesLoaded(["networks"]);
    assert.ok(loaded.has("better-sqlite3"), "the probe sees the modules the command does load");
    for (const pkg of ["fastify", "@fastify/static", "bullmq", "ioredis", "pg", "@mapbox/shp-write"])
      assert.ok(!loaded.has(pkg), `${pkg} was loaded`);
  });

  it("of serve on SQLite loads the HTTP stack but neither the PostgreSQL nor the Redis client", async () => {
    // Only the distributed deployment (STREETFLOW_REDIS_URL) uses ioredis, for its rate counters and job queue.
    const server = await startServer(["--no-demo"], undefined, PROBED);
    try {
      assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200);
    } finally {
      await server.stop();
    }
    const loaded = packagesIn(server.output());
    assert.ok(loaded.has("fastify"), "the probe sees the modules the server does load");
    for (const pkg of ["bullmq", "ioredis", "pg"]) assert.ok(!loaded.has(pkg), `${pkg} was loaded`);
  });
});
