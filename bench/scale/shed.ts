/**
 * `npm run bench -- scale shed [seconds=5] [connections=64] [backend=sqlite]`: how many 503 `overloaded` answers one real
 * `serve --role api` process gives per second, and per CPU-second of that process, to `connections`
 * keep-alive clients POSTing /counts/v1/metrics in a closed loop (the body of `scale counts`):
 * - `event loop`: STREETFLOW_SHED_HEAP_MB=1, a heap limit every process passes, so @fastify/under-pressure
 *   refuses every request but /healthz (the event-loop shedding path);
 * - `pool full`: pool depth 1, held by heavy polygon queries of another key sent one after the other, so
 *   the heavy route's onRequest check refuses the flood (the pool shedding path).
 * The generator runs on the same cores: the per-CPU-second figure is the server's own cost. `backend=`
 * as for `scale counts` (bench/scale/deployment.ts).
 */
import { loadavg } from "node:os";
import { centreOf, extractStatsStore, quantile, radiusSelector } from "../counts.js";
import {
  countBy,
  cpuSeconds,
  argsOf,
  metricsBody,
  networkCircle,
  round,
  send,
  startApi,
  type Outcome,
} from "./counts.js";
import { backendsOf, deploy } from "./deployment.js";

const MODES: [string, Record<string, string>][] = [
  ["event loop", { STREETFLOW_SHED_HEAP_MB: "1" }],
  ["pool full", { STREETFLOW_POOL_MAX_QUEUE: "1", STREETFLOW_POOL_PER_KEY: "1" }],
];

export default async function scaleShed(args: string[]): Promise<Record<string, unknown>> {
  const arg = argsOf(args);
  const seconds = Number(arg("seconds", 0, "5"));
  const connections = Number(arg("connections", 1, "64"));
  const backends = backendsOf(arg("backend", 2, "sqlite"));
  const source = await extractStatsStore();
  if (!source) return { skipped: "shared data absent (the Liechtenstein extract)" };
  const body = metricsBody(radiusSelector(centreOf(source.network), 2_611));
  const heavy = metricsBody({
    polygon: { type: "polygon", coordinates: [networkCircle(source.network, 10_000)] },
  });
  const load = loadavg();
  const runs = [];
  for (const backend of backends) {
    const deployment = await deploy(backend, source);
    try {
      const [key, hogKey] = await deployment.newKeys(2);
      for (const [mode, env] of MODES) {
        const server = await startApi(deployment.dataDir, { ...deployment.env, ...env });
        try {
          let hogging = mode === "pool full";
          const hog = (async () => {
            while (hogging) await send(server.base, hogKey, heavy);
          })();
          const cpu = cpuSeconds(server.pid);
          const outcomes = await flood(server.base, key, body, connections, seconds);
          const used = cpuSeconds(server.pid) - cpu;
          hogging = false;
          await hog;
          const shed = outcomes.filter((o) => o.status === 503).length;
          runs.push({
            backend,
            mode,
            answers: outcomes.length,
            statuses: countBy(outcomes.map((o) => o.status)),
            shedPerS: round(shed / seconds),
            serverCpuS: round(used, 2),
            shedPerServerCpuS: round(shed / used),
            p99Ms: round(
              quantile(
                outcomes.map((o) => o.ms),
                0.99,
              ),
            ),
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
    secondsPerRun: seconds,
    connections,
    runs,
    loadAvg1m: round(load[0], 2),
    loadAvgAfter1m: round(loadavg()[0], 2),
  };
}

/** `connections` clients, each sending the next request when the last is answered, for `seconds`. */
async function flood(base: string, key: string, body: object, connections: number, seconds: number) {
  const until = performance.now() + seconds * 1000;
  const outcomes: Outcome[] = [];
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) outcomes.push(await send(base, key, body));
    }),
  );
  return outcomes;
}
