import type { Command } from "commander";
import type { AppContext } from "../app/context.js";
import { openServerContext } from "../main/runtime.js";

export function dataDirOf(program: Command): string {
  return program.opts<{ dataDir: string }>().dataDir;
}

/**
 * Runs a command against the store and always closes it: PostgreSQL when STREETFLOW_DATABASE_URL is
 * set, as for `serve`, else the SQLite file of the data directory. Only a command that queues jobs
 * (a distributed ingest) asks for `jobQueue`, and so connects to Redis when STREETFLOW_REDIS_URL is set.
 */
export async function withContext<T>(
  program: Command,
  fn: (ctx: AppContext) => T | Promise<T>,
  options: { jobQueue?: boolean } = {},
): Promise<T> {
  const ctx = await openServerContext(dataDirOf(program), { jobQueue: options.jobQueue ?? false });
  try {
    return await fn(ctx);
  } finally {
    await ctx.store.close();
  }
}
