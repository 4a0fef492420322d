import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * A file under the shared data folder, which sits at `../shared/data` beside the
 * repository (`../../shared/data` from a worktree under /work/wt). Null when absent
 * so tests can skip.
 */
export function sharedDataFile(relative: string): string | null {
  for (const base of ["../../../shared/data/", "../../../../shared/data/"]) {
    const path = fileURLToPath(new URL(base + relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  return null;
}
