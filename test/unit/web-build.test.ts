import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { webBundleSettled } from "../../src/main/web-build.js";

function markerFile(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), "sf-web-build-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, ".web-build");
}

test("no web build under way: the server goes on at once", async (t) => {
  await webBundleSettled(markerFile(t));
});

test("the server waits while the builder runs, and goes on once its marker is gone", async (t) => {
  const marker = markerFile(t);
  const builder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
  t.after(() => builder.kill());
  writeFileSync(marker, JSON.stringify({ pid: builder.pid }));
  let settled = false;
  const waiting = webBundleSettled(marker, 10).then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(settled, false, "still building");
  rmSync(marker);
  await waiting;
  assert.equal(settled, true);
});

test("a failed web build stops the server with its reason", async (t) => {
  const marker = markerFile(t);
  writeFileSync(marker, JSON.stringify({ failed: "main.ts:3:1: Unexpected }" }));
  await assert.rejects(webBundleSettled(marker, 10), /did not build: main\.ts:3:1: Unexpected }/);
});

test("a builder gone without finishing stops the server rather than serving half a bundle", async (t) => {
  const marker = markerFile(t);
  const builder = spawn(process.execPath, ["-e", ""]);
  await new Promise((resolve) => builder.once("exit", resolve));
  writeFileSync(marker, JSON.stringify({ pid: builder.pid }));
  await assert.rejects(webBundleSettled(marker, 10), /stopped before it finished/);
});
