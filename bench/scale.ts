/**
 * Scale-out benchmarks (issue 15): `npm run bench -- scale MODE [args]`.
 * - `counts`: POST /counts/v1/metrics (1,000 segments × 12 months) offered open-loop at fixed rates to
 *   1 and 2 API processes, with throughput, p99 and shed counts; and /healthz p99 during a heavy
 *   polygon query (bench/scale/counts.ts).
 * - `analysis`: one OD_Analysis (1,000,000 trips × 1,000 zones) on PostgreSQL + Redis, split into shard
 *   jobs, with 1, 2 and 4 worker processes; wall and CPU time (bench/scale/analysis.ts).
 * - `ingest`: a simulated month of Monaco traces ingested by one process, then in chunks by 1 and 2
 *   worker processes on PostgreSQL + Redis; wall and CPU time, same stored data (bench/scale/ingest.ts).
 * - `shed`: how many 503 `overloaded` answers one API process gives per second and per CPU-second, shed
 *   by the event-loop check and by a full pool (bench/scale/shed.ts).
 * Each mode lives in its own module, so modes are added without touching the others.
 */
const MODES: Record<
  string,
  () => Promise<{ default: (args: string[]) => Promise<Record<string, unknown>> }>
> = {
  counts: () => import("./scale/counts.js"),
  analysis: () => import("./scale/analysis.js"),
  ingest: () => import("./scale/ingest.js"),
  shed: () => import("./scale/shed.js"),
};

export default async function scaleBench(args: string[]): Promise<Record<string, unknown>> {
  const [mode, ...rest] = args;
  const load = mode ? MODES[mode] : undefined;
  if (!load)
    throw new Error(`usage: npm run bench -- scale MODE   (one of: ${Object.keys(MODES).join(", ")})`);
  return { mode, ...(await (await load()).default(rest)) };
}
