import { availableParallelism } from "node:os";
import { resolve } from "node:path";

export interface Config {
  dataDir: string;
  port: number;
  host: string;
  /** Analyses computed at the same time (one worker thread each). */
  jobWorkers: number;
  /** The built web application to serve at `/` (default dist/web of the installation). */
  webRoot?: string;
}

/** Settings from the environment; CLI flags override them. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    dataDir: resolve(env.STREETFLOW_DATA_DIR ?? "./var"),
    port: Number(env.PORT ?? 8080),
    host: env.HOST ?? "0.0.0.0",
    // Two by default: a long analysis does not hold up a short one; more only if the machine has cores.
    jobWorkers: Number(env.STREETFLOW_JOB_WORKERS ?? Math.min(2, availableParallelism())),
    webRoot: env.STREETFLOW_WEB_ROOT ? resolve(env.STREETFLOW_WEB_ROOT) : undefined,
  };
}

export const databaseFile = (dataDir: string) => resolve(dataDir, "streetflow.db");
