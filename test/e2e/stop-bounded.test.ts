import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { reachRedis, TEST_REDIS_URL } from "../helpers/distributed.js";
import { exitOf, waitFor } from "../helpers/stop-process.js";

const CLI = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));

/** A TCP relay to the test Redis that can be cut: the worker's Redis then stops answering. */
async function redisRelay(): Promise<{ url: string; cut(): void; close(): void }> {
  const target = new URL(TEST_REDIS_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => s.destroy());
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  // Cut: new connections hang unanswered (the port stays open), live ones are dropped.
  const cut = () => {
    server.removeAllListeners("connection");
    server.on("connection", (s: Socket) => sockets.add(s));
    sockets.forEach((s) => s.destroy());
  };
  const close = () => {
    sockets.forEach((s) => s.destroy());
    server.close();
  };
  return { url: `redis://127.0.0.1:${port}`, cut, close };
}

function startWorker(redisUrl: string, dataDir: string): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "serve", "--role", "worker", "--job-workers", "1"],
    {
      env: {
        ...process.env,
        STREETFLOW_DATA_DIR: dataDir,
        STREETFLOW_REDIS_URL: redisUrl,
        STREETFLOW_REDIS_PREFIX: `sf-stop-${process.pid}-${Date.now()}`,
        STREETFLOW_SHUTDOWN_MS: "1500",
      },
    },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  return { child, output: () => out };
}

/**
 * SIGTERM stops a worker within STREETFLOW_SHUTDOWN_MS even when Redis no longer answers: the hand-back
 * and the queue's close would wait for it forever, so the process gives up, says so, and exits 1.
 */
describe("a worker's stop is bounded in time", async () => {
  const redis = await reachRedis("the bounded-stop test");
  redis.client?.disconnect();
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  for (const redisAnswers of [true, false]) {
    it(
      redisAnswers ? "exits 0 when the stop completes" : "exits 1 with a reason when Redis has gone",
      { skip: redis.skip, timeout: 120_000 },
      async () => {
        const relay = await redisRelay();
        const dataDir = mkdtempSync(join(tmpdir(), "sf-stop-"));
        dirs.push(dataDir);
        const worker = startWorker(relay.url, dataDir);
        try {
          await waitFor(
            () => (/Streetflow worker: 1 job runner/.test(worker.output()) ? true : undefined),
            () => `the worker did not start: ${worker.output()}`,
            { withinMs: 90_000, everyMs: 50 },
          );
          if (!redisAnswers) relay.cut();
          worker.child.kill("SIGTERM");
          const code = await exitOf(worker.child);
          assert.equal(code, redisAnswers ? 0 : 1, worker.output());
          const gaveUp = /took longer than 1500 ms \(STREETFLOW_SHUTDOWN_MS\)/;
          if (redisAnswers) assert.doesNotMatch(worker.output(), gaveUp);
          else assert.match(worker.output(), gaveUp);
        } finally {
          worker.child.kill("SIGKILL");
          relay.close();
        }
      },
    );
  }
});
