import type { Command } from "commander";
import type { AppContext } from "../app/context.js";
import { openServerContext } from "../main/runtime.js";

export function dataDirOf(program: Command): string {
  return program.opts<{ dataDir: string }>().dataDir;
}

/**
 * Runs a command against the store and always closes it: PostgreSQL when STREETFLOW_DATABASE_URL is
 * set, as for `serve`, else the SQLite file of the data directory. No command queues jobs, so none
 * connects to Redis.
 */
export async function withContext<T>(program: Command, fn: (ctx: AppContext) => T | Promise<T>): Promise<T> {
  const ctx = await openServerContext(dataDirOf(program), { jobQueue: false });
  try {
    return await fn(ctx);
  } finally {
    await ctx.store.close();
  }
}
