import type { Command } from "commander";
import type { AppContext } from "../app/context.js";
import { openContext } from "../runtime.js";

export function dataDirOf(program: Command): string {
  return program.opts<{ dataDir: string }>().dataDir;
}

/** Runs a command against the store of the data directory and always closes it. */
export async function withContext<T>(program: Command, fn: (ctx: AppContext) => T | Promise<T>): Promise<T> {
  const ctx = openContext(dataDirOf(program));
  try {
    return await fn(ctx);
  } finally {
    await ctx.store.close();
  }
}
