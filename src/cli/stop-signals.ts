/**
 * Graceful stop on SIGTERM or SIGINT, bounded in time: `stop` hands back work and closes connections,
 * then the process exits 0. A stop that does not finish within `withinMs` (a database or Redis that no
 * longer answers, a close that waits on it) ends the process with exit code 1 instead of hanging until
 * the orchestrator's SIGKILL: whatever was not handed back is taken over when its lease runs out. A
 * second signal during the stop ends the process at once (Node's default, the handlers being `once`).
 */
export function stopOnSignals(
  stop: () => Promise<void>,
  withinMs: number,
  log: (line: string) => void,
): void {
  const onSignal = (signal: NodeJS.Signals) => {
    setTimeout(() => {
      log(
        `stopping (${signal}) took longer than ${withinMs} ms (STREETFLOW_SHUTDOWN_MS): exiting now; ` +
          "jobs not handed back run again when their leases end",
      );
      process.exit(1);
    }, withinMs);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log(`stopping (${signal}) failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
}
