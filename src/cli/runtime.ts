import type { Command } from "commander";
import { openServerRuntime, type Runtime } from "../runtime.js";

export function dataDirOf(program: Command): string {
  return program.opts<{ dataDir: string }>().dataDir;
}

/**
 * Runs a command against the store and always closes it: PostgreSQL when STREETFLOW_DATABASE_URL is
 * set, as for `serve`, else the SQLite file of the data directory. No command queues jobs, so none
 * connects to Redis.
 */
export async function withRuntime<T>(program: Command, fn: (rt: Runtime) => T | Promise<T>): Promise<T> {
  const rt = await openServerRuntime(dataDirOf(program), { jobQueue: false });
  try {
    return await fn(rt);
  } finally {
    await rt.store.close();
  }
}
