/**
 * `npm run bench -- NAME [args]` runs bench/NAME.ts, whose default export
 * returns the results; they are printed as one JSON line.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [name, ...args] = process.argv.slice(2);
const available = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts")
  .map((f) => f.replace(/\.ts$/, ""));
if (!name || !existsSync(join(here, `${name}.ts`))) {
  console.error(`usage: npm run bench -- NAME   (one of: ${available.join(", ") || "none yet"})`);
  process.exit(2);
}
const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as {
  default: (args: string[]) => Promise<Record<string, unknown>>;
};
const results = await mod.default(args);
console.log(JSON.stringify({ bench: name, at: new Date().toISOString(), node: process.version, ...results }));
