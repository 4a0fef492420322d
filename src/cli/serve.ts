import { InvalidArgumentError, type Command } from "commander";
import { configFromEnv } from "../config/config.js";
import { dataDirOf } from "./context.js";

/** What one process of a deployment does: answer HTTP, run analysis jobs, or both (the single-process default). */
export const ROLES = ["all", "api", "worker"] as const;
export type Role = (typeof ROLES)[number];

interface ServeOptions {
  port: string;
  host: string;
  demo: boolean;
  jobs: boolean;
  jobWorkers: number;
  role: string;
}

/**
 * `streetflow serve`: its options here, the server in serve-run.ts, loaded only when it runs: loading the HTTP
 * stack, with the store's clients, took ~0.6 s of every other command's start (docs/performance.md, "CLI start").
 */
export function serveCommand(program: Command): void {
  program
    .command("serve")
    .description("start the HTTP server (API, jobs and web application)")
    .option("--port <port>", "port to listen on (env PORT)", String(configFromEnv().port))
    .option(
      "--host <host>",
      "address to listen on, 0.0.0.0 for every interface (env HOST)",
      configFromEnv().host,
    )
    .option("--no-demo", "do not create demo data in an empty store")
    .option(
      "--role <role>",
      "api: HTTP only (stateless, any number behind a load balancer); worker: analysis jobs only; all: both (env STREETFLOW_ROLE)",
      roleOf,
      process.env.STREETFLOW_ROLE ?? "all",
    )
    .option("--no-jobs", "the same as --role api")
    .option(
      "--job-workers <n>",
      "analyses computed at the same time, each in a worker thread (env STREETFLOW_JOB_WORKERS)",
      workerCount,
      configFromEnv().jobWorkers,
    )
    .action(async (opts: ServeOptions) => {
      // The flag is checked by workerCount; a default from the environment is not, so check it here.
      if (!isWorkerCount(opts.jobWorkers))
        program.error("error: STREETFLOW_JOB_WORKERS must be a whole number of at least 1");
      if (!isRole(opts.role)) program.error(`error: STREETFLOW_ROLE must be one of ${ROLES.join(", ")}`);
      const role: Role = opts.jobs ? opts.role : "api";
      const { runServe } = await import("./serve-run.js");
      await runServe(dataDirOf(program), opts, role);
    });
}

const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

function roleOf(value: string): Role {
  if (!isRole(value)) throw new InvalidArgumentError(`one of ${ROLES.join(", ")} is needed`);
  return value;
}

/** Commander reports the InvalidArgumentError as a one-line usage error. */
function workerCount(value: string): number {
  const n = Number(value);
  if (!isWorkerCount(n)) throw new InvalidArgumentError("a whole number of at least 1 is needed");
  return n;
}

const isWorkerCount = (n: number) => Number.isInteger(n) && n >= 1;
