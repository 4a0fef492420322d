/**
 * `npm start` runs this before serving: the build (tsc + the web bundle, ~20–40 s) runs only when a
 * build input changed since the last build. Inputs are hashed (SHA-1 over paths and contents of src/,
 * package.json, package-lock.json, tsconfig.json); the hash of the last successful build is kept in
 * dist/.build-stamp, and the build also runs when an output is missing.
 */
import { execFileSync } from "node:child_process";
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
export function buildIfChanged(root: string, build: () => void): boolean {
  if (!needsBuild(root)) return false;
  const hash = inputsHash(root);
  build();
  writeFileSync(join(root, STAMP), hash + "\n");
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const root = resolve(import.meta.dirname, "..");
  const built = buildIfChanged(root, () =>
    execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" }),
  );
  if (!built) console.error("build is up to date (dist/.build-stamp), skipping it");
}
