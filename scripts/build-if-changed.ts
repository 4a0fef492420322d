/**
 * `npm start` runs this before serving: the build runs only when a build input changed since the last
 * build. Inputs are hashed (SHA-1 over paths and contents of src/, package.json, package-lock.json,
 * tsconfig.json); the hash of the last successful build is kept in dist/.build-stamp, and the build also
 * runs when an output is missing.
 *
 * The build here transpiles the server's sources file by file with esbuild (what tsc emits, without the
 * type check: ~1 s instead of tsc's ~8 s), then hands the web bundle (~2 s more) to a child process and
 * exits, so that `npm start` starts the server at once: the server makes its demo data while the bundle
 * builds and serves only once it is written (src/main/web-build.ts: the child's pid is in dist/.web-build
 * meanwhile, its failure after). The child writes the stamp. Type errors are caught where they are made:
 * `npm run typecheck`, `npm run build` (tsc) and the landing checks.
 */
import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { WebBuildState } from "../src/main/web-build.js";

const INPUTS = ["src", "package.json", "package-lock.json", "tsconfig.json"];
const OUTPUTS = ["dist/cli/index.js", "dist/web/main.js"];
const STAMP = "dist/.build-stamp";
/** The same file as src/main/web-build.ts's WEB_BUILD_MARKER, from the root given. */
const WEB_MARKER = "dist/.web-build";

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

/** The server's sources transpiled to dist/ as `npm run build` lays them out (ESM .js and a source map per file). */
export async function buildServer(root: string): Promise<void> {
  // Loaded here: a start with nothing to build needs none of it.
  const { build } = await import("esbuild");
  await build({
    entryPoints: serverSources(root),
    outdir: join(root, "dist"),
    outbase: join(root, "src"),
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    tsconfig: join(root, "tsconfig.json"),
    logLevel: "warning",
  });
}

async function buildWebOf(root: string): Promise<void> {
  const { buildWeb } = await import("../src/web/build.js");
  await buildWeb(join(root, "dist", "web"));
}

/** dist/ as `npm run build` lays it out and the web bundle, side by side, in this process. */
export async function startBuild(root: string): Promise<void> {
  await Promise.all([buildServer(root), buildWebOf(root)]);
}

/**
 * `npm start`'s build: the server's code here, the web bundle in a child process that outlives this one
 * (`--web ROOT HASH`, below). The stamp is removed first, so an interrupted build is done again next time.
 */
export async function buildServerThenWebInBackground(root: string): Promise<void> {
  const hash = inputsHash(root);
  rmSync(join(root, STAMP), { force: true });
  await buildServer(root);
  // tsx as this script found it: `root` need not hold it (tests build a tree of their own).
  const tsx = import.meta.resolve("tsx");
  const child = spawn(
    process.execPath,
    ["--import", tsx, fileURLToPath(import.meta.url), "--web", root, hash],
    {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  if (child.pid === undefined) throw new Error("could not start the web application's build");
  // Before this process exits, so the server, started next, finds it; the child takes far longer to finish.
  writeMarker(root, { pid: child.pid });
  child.unref();
}

/** The child's part: the web bundle, then the marker removed and the stamp written (or the failure kept). */
async function buildWebThenStamp(root: string, hash: string): Promise<void> {
  try {
    await buildWebOf(root);
  } catch (error) {
    writeMarker(root, { failed: error instanceof Error ? error.message : String(error) });
    throw error;
  }
  // In this order: a stamp beside a marker whose builder is gone would stop every later start.
  rmSync(join(root, WEB_MARKER), { force: true });
  writeFileSync(join(root, STAMP), hash + "\n");
}

/** Replaced whole (rename), so the server never reads half a marker. */
function writeMarker(root: string, state: WebBuildState): void {
  const file = join(root, WEB_MARKER);
  writeFileSync(`${file}.tmp`, JSON.stringify(state));
  renameSync(`${file}.tmp`, file);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const root = resolve(import.meta.dirname, "..");
  if (process.argv[2] === "--web") await buildWebThenStamp(process.argv[3], process.argv[4]);
  else if (needsBuild(root)) await buildServerThenWebInBackground(root);
  else console.error("build is up to date (dist/.build-stamp), skipping it");
}
