import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stopProcess } from "./stop-process.js";
import { tempDir } from "./temp-dir.js";

const CLI = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));

export interface RunningServer {
  baseUrl: string;
  dataDir: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Runs `streetflow ARGS` to completion in a data directory (`env` added to this process's); resolves with its output. */
export function runCli(
  dataDir: string,
  args: string[],
  input = "",
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
      env: { ...process.env, STREETFLOW_DATA_DIR: dataDir, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/**
 * Starts `streetflow serve` as a real process on a free port with a fresh data
 * directory and waits for it to listen (first start creates the demo data).
 */
export async function startServer(
  extraArgs: string[] = [],
  dataDir?: string,
  env: NodeJS.ProcessEnv = {},
): Promise<RunningServer> {
  const dir = dataDir ?? tempDir("streetflow-e2e-");
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "serve", "--port", "0", ...extraArgs],
    {
      env: { ...process.env, STREETFLOW_DATA_DIR: dir, HOST: "127.0.0.1", ...env },
    },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /listening on (http:\/\/localhost:\d+)/.exec(out);
      if (m) resolve(m[1].replace("localhost", "127.0.0.1"));
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  return {
    baseUrl,
    dataDir: dir,
    output: () => out,
    stop: async () => {
      await stopProcess(child);
    },
  };
}

export function demoPassword(dataDir: string): string {
  return readFileSync(join(dataDir, "demo-password.txt"), "utf8").trim();
}

export function demoKey(dataDir: string): string {
  return readFileSync(join(dataDir, "demo-api-key.txt"), "utf8").trim();
}

/**
 * fetch, sent again while the server sheds it (503 `overloaded`, as on a loaded CI machine) after the
 * Retry-After it gives, as a well-behaved client does; any other answer is returned as it is.
 */
export async function fetchUnlessShed(url: string, init?: RequestInit, tries = 30): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, init);
    if (res.status !== 503 || attempt === tries) return res;
    const text = await res.clone().text();
    if (!text.includes('"overloaded"')) return res;
    const seconds = Number(res.headers.get("retry-after") ?? 1);
    await new Promise((r) => setTimeout(r, Math.min(5, Math.max(0.2, seconds)) * 1000));
  }
}
