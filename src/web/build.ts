/**
 * Bundles the web application into dist/web/: main.js (esbuild, with maplibre-gl inside), styles.css (the
 * view stylesheets inlined), the HTML and maplibre-gl's worker module, which the bundle loads from its own
 * directory, and the static pages: favicon.svg and method.html (how the figures are expanded).
 * Run: `npm run build:web` (part of `npm run build`).
 */
import { build } from "esbuild";
import { copyFile, mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), "client");
export const webOutDir = resolve(clientDir, "../../../dist/web");

const require = createRequire(import.meta.url);
const maplibreDist = dirname(require.resolve("maplibre-gl/package.json")) + "/dist";

const STATIC_FILES: [from: string, to: string][] = [
  [join(clientDir, "index.html"), "index.html"],
  [join(clientDir, "method.html"), "method.html"],
  [join(clientDir, "admin.html"), "admin.html"],
  [join(clientDir, "favicon.svg"), "favicon.svg"],
  [join(maplibreDist, "maplibre-gl.css"), "maplibre-gl.css"],
  [join(maplibreDist, "maplibre-gl-worker.mjs"), "maplibre-gl-worker.mjs"],
];

export async function buildWeb(outDir = webOutDir): Promise<void> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: { main: join(clientDir, "main.ts"), admin: join(clientDir, "admin.ts") },
    outdir: outDir,
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    sourcemap: true,
    logLevel: "warning",
  });
  // The stylesheet @imports each view's rules; bundling inlines them into one file.
  await build({
    entryPoints: [join(clientDir, "styles.css")],
    outfile: join(outDir, "styles.css"),
    bundle: true,
    minify: true,
    logLevel: "warning",
  });
  await Promise.all(STATIC_FILES.map(([from, to]) => copyFile(from, join(outDir, to))));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildWeb();
  console.log(`web application built in ${webOutDir}`);
}
