import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/**
 * While `npm start`'s build writes the web bundle after the server's code (scripts/build-if-changed.ts), this
 * file holds the builder's pid, so the server can make its demo data meanwhile and serve the bundle only
 * once it is whole; a failed build leaves its reason here instead. dist/ of the repository, from src/main/
 * (tsx) and dist/main/ (built) alike.
 */
export const WEB_BUILD_MARKER = fileURLToPath(new URL("../../dist/.web-build", import.meta.url));

/** What the marker holds: the builder's pid while it builds, the reason once it failed. */
export type WebBuildState = { pid: number } | { failed: string };

/**
 * Resolves once no web bundle is being built (at once when none was); rejects when the build failed or its
 * process is gone without finishing it (the next `npm start` builds again: no stamp was written).
 */
export async function webBundleSettled(marker = WEB_BUILD_MARKER, pollMs = 100): Promise<void> {
  for (;;) {
    let state: WebBuildState;
    try {
      state = JSON.parse(readFileSync(marker, "utf8")) as WebBuildState;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    if ("failed" in state) throw new Error(`the web application did not build: ${state.failed}`);
    if (!isAlive(state.pid))
      throw new Error("the web application's build stopped before it finished; run `npm start` again");
    await sleep(pollMs);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
