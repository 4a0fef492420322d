// Preloaded (NODE_OPTIONS=--import) by a test: at exit, writes the CommonJS modules the process loaded to
// stderr, one line after a marker, so the test can tell which packages a command loaded.
import { createRequire } from "node:module";
import process from "node:process";

const require = createRequire(import.meta.url);
process.on("exit", () => {
  const loaded = Object.keys(require("node:module")._cache);
  process.stderr.write(`\nCJS_MODULES ${JSON.stringify(loaded)}\n`);
});
