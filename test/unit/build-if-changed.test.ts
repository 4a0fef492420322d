import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import {
  buildIfChanged,
  buildServerThenWebInBackground,
  inputsHash,
  needsBuild,
  startBuild,
} from "../../scripts/build-if-changed.js";
import { webBundleSettled } from "../../src/main/web-build.js";

/** A project tree with sources and a fake build that writes both outputs. */
function project() {
  const root = mkdtempSync(join(tmpdir(), "sf-build-"));
  mkdirSync(join(root, "src/web/client"), { recursive: true });
  writeFileSync(join(root, "src/a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "src/web/client/main.ts"), "console.log(1);\n");
  writeFileSync(join(root, "package.json"), "{}\n");
  let builds = 0;
  const build = async () => {
    builds++;
    mkdirSync(join(root, "dist/cli"), { recursive: true });
    mkdirSync(join(root, "dist/web"), { recursive: true });
    writeFileSync(join(root, "dist/cli/index.js"), "");
    writeFileSync(join(root, "dist/web/main.js"), "");
  };
  return { root, build, builds: () => builds };
}

test("npm start builds once, then skips the build until a source changes", async (t) => {
  const p = project();
  t.after(() => rmSync(p.root, { recursive: true, force: true }));
  assert.equal(await buildIfChanged(p.root, p.build), true);
  assert.equal(await buildIfChanged(p.root, p.build), false);
  assert.equal(p.builds(), 1);

  writeFileSync(join(p.root, "src/web/client/main.ts"), "console.log(2);\n");
  assert.equal(needsBuild(p.root), true);
  assert.equal(await buildIfChanged(p.root, p.build), true);
  assert.equal(p.builds(), 2);

  writeFileSync(join(p.root, "src/b.ts"), "export const b = 2;\n");
  assert.equal(needsBuild(p.root), true, "a new source file");
});

test("a missing output or a failed build means the next start builds again", async (t) => {
  const p = project();
  t.after(() => rmSync(p.root, { recursive: true, force: true }));
  await buildIfChanged(p.root, p.build);
  rmSync(join(p.root, "dist/web/main.js"));
  assert.equal(needsBuild(p.root), true);
  await buildIfChanged(p.root, p.build);

  writeFileSync(join(p.root, "src/a.ts"), "export const a = ;\n");
  await assert.rejects(
    buildIfChanged(p.root, async () => {
      throw new Error("build failed");
    }),
  );
  assert.equal(needsBuild(p.root), true);
});

/** A small server tree: what tsc compiles for us (a type-only import, parameter properties, a class field). */
function serverProject(t: { after: (fn: () => void) => void }): string {
  const root = mkdtempSync(join(tmpdir(), "sf-start-build-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "src/cli"), { recursive: true });
  mkdirSync(join(root, "src/web"), { recursive: true });
  copyFileSync(join(import.meta.dirname, "../../tsconfig.json"), join(root, "tsconfig.json"));
  writeFileSync(join(root, "package.json"), '{ "type": "module" }\n');
  // A type-only import (elided), parameter properties and a class field: what tsc compiles for us.
  writeFileSync(join(root, "src/types.d.ts"), "export interface Named { name: string }\n");
  writeFileSync(
    join(root, "src/greeter.ts"),
    "import type { Named } from './types.js';\n" +
      "export class Greeter { count = 0; constructor(private readonly who: Named) {}\n" +
      "  greet(): string { this.count++; return `hello ${this.who.name} ${this.count}`; } }\n",
  );
  writeFileSync(
    join(root, "src/cli/index.ts"),
    "import { Greeter } from '../greeter.js';\nconsole.log(new Greeter({ name: 'mc' }).greet());\n",
  );
  writeFileSync(join(root, "src/web/ignored.ts"), "export const x: number = 1;\n");
  return root;
}

test("the start build emits runnable ESM for the server, as tsc lays it out, and the web bundle", async (t) => {
  const root = serverProject(t);
  await startBuild(root);
  assert.equal(execFileSync("node", [join(root, "dist/cli/index.js")], { encoding: "utf8" }), "hello mc 1\n");
  assert.ok(existsSync(join(root, "dist/greeter.js.map")));
  assert.ok(!existsSync(join(root, "dist/types.d.js")), "declarations emit nothing");
  assert.ok(!existsSync(join(root, "dist/web/ignored.js")), "src/web is the web bundle's, not the server's");
  assert.ok(existsSync(join(root, "dist/web/main.js")), "the web bundle");
});

test("npm start's build: the server's code at once, the web bundle after it in a child the server waits for", async (t) => {
  const root = serverProject(t);
  await buildServerThenWebInBackground(root);
  // Runnable now, before the bundle is written; no stamp until it is.
  assert.equal(execFileSync("node", [join(root, "dist/cli/index.js")], { encoding: "utf8" }), "hello mc 1\n");
  const marker = join(root, "dist/.web-build");
  assert.ok(existsSync(marker), "the builder's pid, for the server to wait on");
  assert.ok(!existsSync(join(root, "dist/.build-stamp")));

  await webBundleSettled(marker);
  assert.ok(existsSync(join(root, "dist/web/main.js")), "the web bundle");
  assert.ok(existsSync(join(root, "dist/web/index.html")));
  assert.equal(readFileSync(join(root, "dist/.build-stamp"), "utf8").trim(), inputsHash(root));
  assert.equal(needsBuild(root), false, "the next start skips the build");
});
