import { existsSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * The shared real-data folder, `../shared/data` next to the repository (also
 * found from a worktree one level deeper), or null when absent: tests skip.
 */
export const SHARED_DATA: string | null =
  [resolve(ROOT, "../shared/data"), resolve(ROOT, "../../shared/data")].find((d) => existsSync(d)) ?? null;
