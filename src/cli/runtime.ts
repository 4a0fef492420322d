import type { Command } from "commander";
import { openRuntime, type Runtime } from "../runtime.js";

export function dataDirOf(program: Command): string {
  return program.opts<{ dataDir: string }>().dataDir;
}

/** Runs a command against the store and always closes it. */
export async function withRuntime<T>(program: Command, fn: (rt: Runtime) => T | Promise<T>): Promise<T> {
  const rt = openRuntime(dataDirOf(program));
  try {
    return await fn(rt);
  } finally {
    await rt.store.close();
  }
}
