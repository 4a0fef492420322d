import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const created: string[] = [];

// node --test runs each test file in its own process: its temporary directories go when it exits,
// including those a server child process filled, so `npm test` leaves nothing in the temp directory.
process.on("exit", () => {
  for (const dir of created) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A fresh directory under the OS temp directory, removed when the test process exits. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}
