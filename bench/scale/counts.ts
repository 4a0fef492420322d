/**
 * `npm run bench -- scale counts [seconds=10] [rates=50,200,1000] [processes=1,2] [backend=sqlite]`: POST
 * /counts/v1/metrics for ~1,000 segments × the 12 months of 2025 (the Liechtenstein store of
 * bench/counts.ts) offered open-loop at fixed rates to 1 and 2 real `streetflow serve --role api` processes
 * (requests alternate between them, as a load balancer would) from 32 clients (keys) in turn, on each
 * backend named (bench/scale/deployment.ts): `sqlite`, the processes on one SQLite file; `postgres`,
 * PostgreSQL + Redis as a distributed deployment runs; `backend=sqlite,postgres` runs both, one after the
 * other, for a side-by-side comparison under the same load. Arguments go by name or by position. Per run: answered 200 per second, latency p50/p99/max
 * measured from each request's scheduled send time (so a slow server cannot hide queueing), the requests
 * shed (503 `overloaded`, 429 `key_busy`), and the server processes' CPU seconds.
 * Then `/healthz` probed every 10 ms while heavy polygon queries run (a 10,000-position polygon over the
 * whole network, every car segment × 12 months), on one process with the worker-thread pool and, side by
 * side, one with heavy requests inline (STREETFLOW_POOL_THREADS=0).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { LonLat } from "../../src/engine/network/types.js";
import type { Network } from "../../src/engine/network/network.js";
import {
  bisectRadius,
  centreOf,
  extractStatsStore,
  metricsRequest,
  quantile,
  radiusSelector,
} from "../counts.js";
import { backendsOf, deploy } from "./deployment.js";
import { poolSettingsOf } from "../../src/config/config.js";

const CLI = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));
const TARGET_SEGMENTS = 1_000;
const CLIENT_TIMEOUT_MS = 60_000;
/** Clients (API keys of their own organizations) the offered requests rotate over. */
const CLIENTS = 32;

/**
 * API processes on one host share its cores, as docs/deployment.md tells operators to size them: each
 * takes its share of the threads one process would have (unless STREETFLOW_POOL_THREADS says otherwise).
 */
function threadsSharingHost(env: Record<string, string>, processes: number): Record<string, string> {
  if (process.env.STREETFLOW_POOL_THREADS) return {};
  const threads = poolSettingsOf(env).threads;
  return { STREETFLOW_POOL_THREADS: String(Math.max(1, Math.floor(threads / processes))) };
}

export default async function scaleCounts(args: string[]): Promise<Record<string, unknown>> {
  const arg = argsOf(args);
  const seconds = Number(arg("seconds", 0, "10"));
  const rates = arg("rates", 1, "50,200,1000").split(",").map(Number);
  const processCounts = arg("processes", 2, "1,2").split(",").map(Number);
  const backends = backendsOf(arg("backend", 3, "sqlite"));
  const source = await extractStatsStore();
  if (!source) return { skipped: "shared data absent (the Liechtenstein extract)" };
  const load = loadavg();
  const runs = [];
  const healthz = [];
  let selection: { segments: number; radiusM: number } | null = null;
  for (const backend of backends) {
    const deployment = await deploy(backend, source);
    try {
      const keys = await deployment.newKeys(CLIENTS);
      const key = keys[0];
      for (const processes of processCounts) {
        const servers = await Promise.all(
          Array.from({ length: processes }, () =>
            startApi(deployment.dataDir, {
              ...deployment.env,
              ...threadsSharingHost(deployment.env, processes),
            }),
          ),
        );
        try {
          const bases = servers.map((s) => s.base);
          selection ??= await radiusFor(bases[0], key, centreOf(source.network));
          const body = metricsBody(radiusSelector(centreOf(source.network), selection.radiusM));
          for (const base of bases) for (let i = 0; i < 5; i++) await send(base, key, body); // warm-up
          for (const rate of rates) {
            const cpu = servers.map((s) => cpuSeconds(s.pid));
            const loadBefore = loadavg()[0];
            const stats = await offer(bases, keys, body, rate, seconds);
            const used = servers.reduce((sum, s, i) => sum + cpuSeconds(s.pid) - cpu[i], 0);
            runs.push({
              backend,
              processes,
              offeredPerS: rate,
              ...stats,
              serverCpuS: round(used, 1),
              loadAvg1m: round(loadBefore, 2),
            });
          }
        } finally {
          await Promise.all(servers.map((s) => s.stop()));
        }
      }
      for (const [label, env] of [
        ["pool", {}],
        ["inline", { STREETFLOW_POOL_THREADS: "0" }],
      ] as const) {
        const server = await startApi(deployment.dataDir, { ...deployment.env, ...env });
        try {
          healthz.push({
            backend,
            heavy: label,
            ...(await healthzDuringHeavy(server.base, key, source.network)),
          });
        } finally {
          await server.stop();
        }
      }
    } finally {
      await deployment.dispose();
    }
  }
  return {
    network: `${source.network.size} segments`,
    selection,
    secondsPerRun: seconds,
    runs,
    healthz,
    loadAvg1m: round(load[0], 2),
    loadAvgAfter1m: round(loadavg()[0], 2),
  };
}

/** `name=value`, else the `position`-th bare argument (the older positional form), else `fallback`. */
export function argsOf(args: string[]) {
  const bare = args.filter((a) => !a.includes("="));
  return (name: string, position: number, fallback: string) =>
    args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1) ?? bare[position] ?? fallback;
}

export interface Api {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

/** `streetflow serve --role api` on a free port over the data directory's store; resolves once it listens. */
export async function startApi(dataDir: string, env: Record<string, string>): Promise<Api> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "serve", "--role", "api", "--no-demo", "--port", "0"],
    {
      env: {
        ...process.env,
        STREETFLOW_DATA_DIR: dataDir,
        HOST: "127.0.0.1",
        // A load test: the per-key rate limit would refuse the bench's own requests.
        STREETFLOW_RATE_LIMIT: "1000000000",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/localhost:\d+)/.exec(out);
      if (!m) return;
      resolve(m[1].replace("localhost", "127.0.0.1"));
      // Keep draining the request log; server errors go to the bench's stderr.
      child.stdout!.off("data", onData);
      child.stdout!.on("data", (line: Buffer) => {
        if (line.includes('"level":50')) process.stderr.write(line.toString().slice(0, 2000));
      });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  return {
    base,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** User + system CPU seconds of a process so far (Linux /proc). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

export interface Outcome {
  status: number;
  ms: number;
}

/** POSTs the body; resolves with the status (0: no answer within the client timeout) and the milliseconds from `since`. */
export function send(
  base: string,
  key: string,
  body: object,
  path = "/counts/v1/metrics",
  since?: number,
): Promise<Outcome> {
  const start = since ?? performance.now();
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const req = http.request(
      `${base}${path}`,
      {
        method: "POST",
        agent,
        timeout: CLIENT_TIMEOUT_MS,
        headers: {
          "content-type": "application/json",
          "content-length": payload.length,
          "x-service-key": key,
        },
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }));
      },
    );
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve({ status: 0, ms: performance.now() - start }));
    req.end(payload);
  });
}

/** Open loop: request i is due at i / rate seconds, whatever the answers so far; latency counts from then. */
async function offer(bases: string[], keys: string[], body: object, rate: number, seconds: number) {
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const pending: Promise<Outcome>[] = [];
  // How late the generator itself sent each request: when it is late, the latencies include its lag.
  const lag: number[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait >= 1) await new Promise((r) => setTimeout(r, wait));
    lag.push(Math.max(0, performance.now() - due));
    pending.push(send(bases[i % bases.length], keys[i % keys.length], body, "/counts/v1/metrics", due));
  }
  const outcomes = await Promise.all(pending);
  const elapsedS = (performance.now() - start) / 1000;
  const ok = outcomes.filter((o) => o.status === 200).map((o) => o.ms);
  const all = outcomes.map((o) => o.ms);
  return {
    sent: total,
    ok: ok.length,
    okPerS: round(ok.length / elapsedS, 1),
    shed503: outcomes.filter((o) => o.status === 503).length,
    shed429: outcomes.filter((o) => o.status === 429).length,
    other: outcomes.filter((o) => ![200, 503, 429].includes(o.status)).length,
    statuses: countBy(outcomes.map((o) => o.status)),
    okP50Ms: round(quantile(ok, 0.5)),
    okP99Ms: round(quantile(ok, 0.99)),
    allP99Ms: round(quantile(all, 0.99)),
    maxMs: round(Math.max(...all)),
    sendLagP99Ms: round(quantile(lag, 0.99)),
  };
}

/** Milliseconds of each /healthz probe, one every 10 ms, until `until` settles. */
async function probeHealthz(base: string, until: Promise<unknown>): Promise<number[]> {
  const probes: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const started = performance.now();
    await new Promise<void>((resolve) =>
      http.get(`${base}/healthz`, { agent }, (res) => res.resume().once("end", resolve)),
    );
    probes.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 10));
  }
  return probes;
}

/** /healthz every 10 ms for 2 s with nothing else to do (the machine's own latency), then while three heavy polygon queries run one after the other. */
async function healthzDuringHeavy(base: string, key: string, network: Network) {
  const idle = await probeHealthz(base, new Promise((r) => setTimeout(r, 2_000)));
  const body = metricsBody({ polygon: { type: "polygon", coordinates: [networkCircle(network, 10_000)] } });
  const heavy: Outcome[] = [];
  const running = (async () => {
    for (let i = 0; i < 3; i++) heavy.push(await send(base, key, body));
  })();
  const probes = await probeHealthz(base, running);
  return {
    idleHealthzP50Ms: round(quantile(idle, 0.5)),
    idleHealthzP99Ms: round(quantile(idle, 0.99)),
    heavyStatus: [...new Set(heavy.map((h) => h.status))],
    heavyMs: heavy.map((h) => round(h.ms)),
    probes: probes.length,
    healthzP50Ms: round(quantile(probes, 0.5)),
    healthzP99Ms: round(quantile(probes, 0.99)),
    healthzMaxMs: round(Math.max(...probes)),
  };
}

export const metricsBody = (geometry: object) => metricsRequest(geometry, { year: 2025 });

/** The radius whose selection holds about TARGET_SEGMENTS segments (POST /segmentcount). */
async function radiusFor(base: string, key: string, centre: LonLat) {
  const countAt = async (radiusM: number) => await segmentCount(base, key, radiusSelector(centre, radiusM));
  const radiusM = await bisectRadius(countAt, TARGET_SEGMENTS);
  return { segments: await countAt(radiusM), radiusM: round(radiusM) };
}

async function segmentCount(base: string, key: string, geometry: object): Promise<number> {
  // A loaded machine may shed these too (503, 429): asked again, since the bisection needs every answer.
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}/counts/v1/segmentcount`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-key": key },
      body: JSON.stringify({ geometry, country: "li", mode: "vehicle" }),
    });
    if (res.ok) return ((await res.json()) as { segment_count: number }).segment_count;
    if (attempt >= 20 || ![429, 503].includes(res.status))
      throw new Error(`segmentcount: ${res.status} ${await res.text()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A closed ring of `positions` positions around the network's bounding box (every segment inside). */
export function networkCircle(network: Network, positions: number): LonLat[] {
  const [west, south, east, north] = network.bbox;
  const [cx, cy] = [(west + east) / 2, (south + north) / 2];
  const [rx, ry] = [((east - west) / 2) * 1.5, ((north - south) / 2) * 1.5];
  const ring: LonLat[] = Array.from({ length: positions - 1 }, (_, i) => {
    const a = (2 * Math.PI * i) / (positions - 1);
    return [cx + rx * Math.cos(a), cy + ry * Math.sin(a)];
  });
  return [...ring, ring[0]];
}

export function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

export const round = (x: number, digits = 1) => Number(x.toFixed(digits));
