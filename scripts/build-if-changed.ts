/**
 * `npm start` runs this before serving: the build runs only when a build input changed since the last
 * build. Inputs are hashed (SHA-1 over paths and contents of src/, package.json, package-lock.json,
 * tsconfig.json); the hash of the last successful build is kept in dist/.build-stamp, and the build also
 * runs when an output is missing.
 *
 * The build here is `startBuild`: the server's sources transpiled file by file with esbuild (what tsc
 * emits, without the type check) while the web bundle builds, in one process: ~1 s instead of tsc's
 * ~8 s on an idle machine, most of a first start's build. Type errors are caught where they are made:
 * `npm run typecheck`, `npm run build` (tsc) and the landing checks.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const INPUTS = ["src", "package.json", "package-lock.json", "tsconfig.json"];
const OUTPUTS = ["dist/cli/index.js", "dist/web/main.js"];
const STAMP = "dist/.build-stamp";

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** SHA-1 over the build inputs' paths and contents, in a fixed order. */
export function inputsHash(root: string): string {
  const hash = createHash("sha1");
  const files = INPUTS.flatMap((input) => filesUnder(join(root, input)))
    .map((file) => relative(root, file))
    .sort();
  for (const file of files) {
    hash.update(file + "\0");
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** True when an output is missing or the inputs differ from those of the last build. */
export function needsBuild(root: string): boolean {
  const stamp = join(root, STAMP);
  if (OUTPUTS.some((output) => !existsSync(join(root, output))) || !existsSync(stamp)) return true;
  return readFileSync(stamp, "utf8").trim() !== inputsHash(root);
}

/** Builds when needed; returns whether it built. The stamp is written only after a build succeeded. */
export async function buildIfChanged(root: string, build: () => Promise<void>): Promise<boolean> {
  if (!needsBuild(root)) return false;
  const hash = inputsHash(root);
  await build();
  writeFileSync(join(root, STAMP), hash + "\n");
  return true;
}

/** The server's sources as tsc compiles them (tsconfig.json: src/ without src/web/ and declarations). */
function serverSources(root: string): string[] {
  return filesUnder(join(root, "src")).filter(
    (f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && !relative(root, f).startsWith(join("src", "web")),
  );
}

/** dist/ as `npm run build` lays it out (ESM .js and source maps per source file), and the web bundle, side by side. */
export async function startBuild(root: string): Promise<void> {
  // Loaded here: a start with nothing to build needs neither.
  const [{ build }, { buildWeb }] = await Promise.all([import("esbuild"), import("../src/web/build.js")]);
  await Promise.all([
    build({
      entryPoints: serverSources(root),
      outdir: join(root, "dist"),
      outbase: join(root, "src"),
      format: "esm",
      platform: "node",
      target: "node20",
      sourcemap: true,
      tsconfig: join(root, "tsconfig.json"),
      logLevel: "warning",
    }),
    buildWeb(join(root, "dist", "web")),
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const root = resolve(import.meta.dirname, "..");
  if (!(await buildIfChanged(root, () => startBuild(root))))
    console.error("build is up to date (dist/.build-stamp), skipping it");
}
