import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
// The probe files exist only in these tests, outside the TypeScript project: lint them without type information.
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: {
    files: ["**/probe.ts"],
    languageOptions: { parserOptions: { project: null } },
    rules: {
      "@typescript-eslint/no-floating-promises": "off",
      "@typescript-eslint/no-misused-promises": "off",
      "@typescript-eslint/await-thenable": "off",
    },
  },
});

/** The layer-rule messages ESLint gives a file at `path` (inside the repo) with the given source. */
async function layerErrors(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: join(ROOT, path) });
  return result.messages
    .filter((m) => m.ruleId === "boundaries/dependencies" && m.severity === 2)
    .map((m) => m.message);
}

test("the lint rule refuses an import against the layers", async () => {
  const engineImportsStore = `import { SqliteStore } from "../../store/sqlite/sqlite-store.js";\nexport const s = SqliteStore;\n`;
  assert.deepEqual(await layerErrors("src/engine/counts/probe.ts", engineImportsStore), [
    "engine must not import adapter (layers: docs/architecture.md)",
  ]);
  const domainImportsApp = `import type { Store } from "../app/ports/store.js";\nexport type S = Store;\n`;
  assert.deepEqual(await layerErrors("src/domain/probe.ts", domainImportsApp), [
    "domain must not import app (layers: docs/architecture.md)",
  ]);
  const domainImportsRoot = `import { openContext } from "../main/runtime.js";\nexport const r = openContext;\n`;
  assert.deepEqual(await layerErrors("src/domain/probe.ts", domainImportsRoot), [
    "domain must not import main (layers: docs/architecture.md)",
  ]);
  const clientImportsServer = `import { MAX_ZONES_PER_SET } from "../../../domain/zone-sets.js";\nexport const n = MAX_ZONES_PER_SET;\n`;
  assert.deepEqual(await layerErrors("src/web/client/views/probe.ts", clientImportsServer), [
    "web-client must not import domain (layers: docs/architecture.md)",
  ]);
});

test("a type-only import() expression, which the layer rule cannot see, is refused", async () => {
  const source = `export type S = import("../app/ports/store.js").Store;\n`;
  const [result] = await eslint.lintText(source, { filePath: join(ROOT, "src/domain/probe.ts") });
  assert.deepEqual(
    result.messages.filter((m) => m.severity === 2).map((m) => m.ruleId),
    ["no-restricted-syntax"],
  );
});

test("the lint rule lets a layer import itself and the layers below", async () => {
  const appImportsDown = [
    `import type { Store } from "./ports/store.js";`,
    `import type { StoredAnalysis } from "../domain/records.js";`,
    `import { monthKey } from "../engine/time.js";`,
    `export type T = [Store, StoredAnalysis, typeof monthKey];`,
  ].join("\n");
  assert.deepEqual(await layerErrors("src/app/probe.ts", appImportsDown + "\n"), []);
  const adapterImportsPort = `import type { Store } from "../../app/ports/store.js";\nexport type S = Store;\n`;
  assert.deepEqual(await layerErrors("src/store/sqlite/probe.ts", adapterImportsPort), []);
});

test("the README layout table names exactly the folders of src/", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const layout = readme.slice(readme.indexOf("## Layout"));
  const documented = [...layout.matchAll(/^\| `src\/([^`/]+)` \|/gm)].map((m) => m[1]).sort();
  const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  assert.deepEqual(documented, folders);
});
