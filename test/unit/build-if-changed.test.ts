import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildIfChanged, needsBuild } from "../../scripts/build-if-changed.js";

/** A project tree with sources and a fake build that writes both outputs. */
function project() {
  const root = mkdtempSync(join(tmpdir(), "sf-build-"));
  mkdirSync(join(root, "src/web/client"), { recursive: true });
  writeFileSync(join(root, "src/a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "src/web/client/main.ts"), "console.log(1);\n");
  writeFileSync(join(root, "package.json"), "{}\n");
  let builds = 0;
  const build = () => {
    builds++;
    mkdirSync(join(root, "dist/cli"), { recursive: true });
    mkdirSync(join(root, "dist/web"), { recursive: true });
    writeFileSync(join(root, "dist/cli/index.js"), "");
    writeFileSync(join(root, "dist/web/main.js"), "");
  };
  return { root, build, builds: () => builds };
}

test("npm start builds once, then skips the build until a source changes", (t) => {
  const p = project();
  t.after(() => rmSync(p.root, { recursive: true, force: true }));
  assert.equal(buildIfChanged(p.root, p.build), true);
  assert.equal(buildIfChanged(p.root, p.build), false);
  assert.equal(p.builds(), 1);

  writeFileSync(join(p.root, "src/web/client/main.ts"), "console.log(2);\n");
  assert.equal(needsBuild(p.root), true);
  assert.equal(buildIfChanged(p.root, p.build), true);
  assert.equal(p.builds(), 2);

  writeFileSync(join(p.root, "src/b.ts"), "export const b = 2;\n");
  assert.equal(needsBuild(p.root), true, "a new source file");
});

test("a missing output or a failed build means the next start builds again", (t) => {
  const p = project();
  t.after(() => rmSync(p.root, { recursive: true, force: true }));
  buildIfChanged(p.root, p.build);
  rmSync(join(p.root, "dist/web/main.js"));
  assert.equal(needsBuild(p.root), true);
  buildIfChanged(p.root, p.build);

  writeFileSync(join(p.root, "src/a.ts"), "export const a = ;\n");
  assert.throws(() =>
    buildIfChanged(p.root, () => {
      throw new Error("tsc failed");
    }),
  );
  assert.equal(needsBuild(p.root), true);
});
