import type { ChildProcess } from "node:child_process";

/** Resolves with the exit code once the process has ended (at once if it has). */
export const exitOf = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once("exit", (code) => resolve(code)));

/**
 * SIGTERM, then SIGKILL if the process has not ended within `graceMs`: a test's clean-up never waits
 * forever on a process that hangs in its shutdown (the hang shows in the test that checks the shutdown).
 */
export async function stopProcess(child: ChildProcess, graceMs = 15_000): Promise<number | null> {
  const exited = exitOf(child);
  if (child.exitCode !== null || child.signalCode !== null) return await exited;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `look` every `everyMs` until it answers a value; rejects with `why()` after `withinMs`, so a
 * wait that is never satisfied fails its test instead of hanging the run.
 */
export async function waitFor<T>(
  look: () => T | undefined | Promise<T | undefined>,
  why: () => string,
  { withinMs = 180_000, everyMs = 10 } = {},
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`not within ${withinMs / 1000} s: ${why()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
