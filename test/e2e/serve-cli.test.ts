import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../helpers/server.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("streetflow serve on a busy port", () => {
  let blocker: Server;
  let port: number;
  before(async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    port = (blocker.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

  it("says so in one line before creating any demo data", async () => {
    const dir = tempDir("streetflow-busy-");
    const { code, stdout, stderr } = await runCli(dir, [
      "serve",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
    ]);
    assert.notEqual(code, 0);
    assert.equal(stderr.trim().split("\n").length, 1, stderr);
    assert.match(stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
    assert.doesNotMatch(stderr, /EADDRINUSE|\n\s+at /);
    assert.equal(stdout, "", "no demo import started");
    assert.equal(existsSync(join(dir, "demo-api-key.txt")), false);
  });
});
