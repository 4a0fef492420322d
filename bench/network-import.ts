/**
 * `npm run bench -- network-import [FILE...]`: reads each OSM extract (default: the
 * shipped Monaco and every file in ../shared/data/osm-extracts) into segments.
 */
import { existsSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import { MONACO_PBF } from "../test/helpers/bundled-data.js";

const repo = fileURLToPath(new URL("..", import.meta.url));
const OSM_FILE = /\.(osm\.pbf|osm|osm\.gz)$/;

function defaultFiles(): string[] {
  const files = [MONACO_PBF];
  // The shared data sits beside the repository; from a worktree under /work/wt it is one level further up.
  const extracts = [
    join(repo, "../shared/data/osm-extracts"),
    join(repo, "../../shared/data/osm-extracts"),
  ].find(existsSync);
  if (extracts)
    for (const f of readdirSync(extracts).sort()) if (OSM_FILE.test(f)) files.push(join(extracts, f));
  return files;
}

export default async function (args: string[]): Promise<Record<string, unknown>> {
  const files = args.length > 0 ? args : defaultFiles();
  const results: Record<string, unknown>[] = [];
  for (const file of files) {
    const started = performance.now();
    const segments = await readOsmSegments(file);
    const seconds = (performance.now() - started) / 1000;
    results.push({
      file: basename(file),
      seconds: Number(seconds.toFixed(3)),
      segments: segments.length,
      segmentsPerSecond: Math.round(segments.length / seconds),
    });
  }
  return { files: results };
}
