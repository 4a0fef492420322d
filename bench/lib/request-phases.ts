/**
 * Where a served request's time goes, for the counts bench's `phases` option: the store's port calls
 * and the transaction's COMMIT timed by wrapping them, V8's GC pauses placed in the request they fell in.
 * Bench-only instrumentation: it wraps the store given to the app, it does not change what is served.
 * Each request also reads the CPU of the process's other threads before and after it (/proc), so that a
 * slow request whose process CPU exceeds its wall time names what ran beside it.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { threadCpuNs } from "./thread-cpu.js";

export const PHASES = ["store", "quota", "pages", "meter", "commit", "gc"] as const;
export type Phase = (typeof PHASES)[number];

/** One request's times (ms) per phase, its total and its GC pauses (which overlap the other phases). */
export interface RequestPhases {
  totalMs: number;
  /** The process's CPU time in the request (V8's helper threads included): far below totalMs, it waited. */
  cpuMs: number;
  ms: Record<Phase, number>;
  /** Bytes the WAL grew by in the request (0 after a checkpoint restarted it). */
  walBytes: number;
  /** CPU ms of each of the process's other threads in the request, by thread (see threadLabels). */
  otherThreadsMs: Record<string, number>;
}

/**
 * Labels for the threads there now that are not yet labelled: `step` names what set-up had done by then
 * (V8's and libuv's threads come at start, a store's checkpoint thread with the store, and so on).
 */
export function labelNewThreads(labels: Map<number, string>, step: string): void {
  for (const tid of threadCpuNs().keys())
    if (tid !== process.pid && !labels.has(tid)) labels.set(tid, `${step} #${tid}`);
}

export class PhaseTimer {
  private current: Record<Phase, number> = emptyPhases();
  private readonly windows: [start: number, end: number][] = [];
  private readonly gcs: [start: number, duration: number][] = [];
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.gcs.push([e.startTime, e.duration]);
  });
  readonly requests: RequestPhases[] = [];

  constructor(
    private readonly walSize: () => number,
    /** Names for thread ids (the rest are shown by id): which threads were there at each step of set-up. */
    private readonly threadLabels: ReadonlyMap<number, string> = new Map(),
  ) {
    this.observer.observe({ entryTypes: ["gc"] });
  }

  /** `ms` more in `phase` of the request under way. */
  add(phase: Phase, ms: number): void {
    this.current[phase] += ms;
  }

  /** `fn` timed into `phase` of the request under way. */
  timed<T>(phase: Phase, fn: () => T): T {
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.current[phase] += performance.now() - started;
    }
  }

  async timedAsync<T>(phase: Phase, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await fn();
    } finally {
      this.current[phase] += performance.now() - started;
    }
  }

  /** A new timer for the next set of requests; this one stops observing. */
  fresh(): PhaseTimer {
    this.observer.disconnect();
    return new PhaseTimer(this.walSize, this.threadLabels);
  }

  async request<T>(run: () => Promise<T>): Promise<T> {
    this.current = emptyPhases();
    const wal = this.walSize();
    const threadsBefore = threadCpuNs();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const out = await run();
    const ended = performance.now();
    const used = process.cpuUsage(cpu);
    const threadsAfter = threadCpuNs();
    this.windows.push([started, ended]);
    this.requests.push({
      totalMs: ended - started,
      cpuMs: (used.user + used.system) / 1000,
      ms: this.current,
      walBytes: this.walSize() - wal,
      otherThreadsMs: this.otherThreads(threadsBefore, threadsAfter),
    });
    return out;
  }

  /** The other threads' CPU between the two readings (0.1 ms or more), by label; the reading's own cost is in none. */
  private otherThreads(before: Map<number, number>, after: Map<number, number>): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [tid, ns] of after) {
      if (tid === process.pid) continue;
      const ms = (ns - (before.get(tid) ?? 0)) / 1e6;
      if (ms < 0.1) continue;
      const label = this.threadLabels.get(tid) ?? `thread ${tid}`;
      out[label] = Number(((out[label] ?? 0) + ms).toFixed(2));
    }
    return out;
  }

  /** The GC pauses placed in their requests, then the slowest requests and the median of each phase. */
  report(slowest = 5) {
    for (const e of this.observer.takeRecords()) this.gcs.push([e.startTime, e.duration]);
    this.observer.disconnect();
    this.gcs.forEach(([at, duration]) => {
      const i = this.windows.findIndex(([start, end]) => at >= start && at < end);
      if (i >= 0) this.requests[i].ms.gc += duration;
    });
    const round = (x: number) => Number(x.toFixed(2));
    const view = (r: RequestPhases) => ({
      totalMs: round(r.totalMs),
      cpuMs: round(r.cpuMs),
      ...Object.fromEntries(PHASES.map((p) => [`${p}Ms`, round(r.ms[p])])),
      // What no wrapped call covers: HTTP, validation, selection, the metrics maths, the page's JSON.
      restMs: round(r.totalMs - PHASES.reduce((sum, p) => sum + (p === "gc" ? 0 : r.ms[p]), 0)),
      walKb: Math.round(r.walBytes / 1024),
      otherThreadsMs: r.otherThreadsMs,
    });
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const commits = this.requests.map((r) => r.ms.commit);
    return {
      // The COMMITs' time over all the requests, and how many took over 10 ms (a checkpoint's fsync, or
      // a write stalled behind one): the tail the transaction adds.
      commitTotalMs: round(commits.reduce((a, b) => a + b, 0)),
      commitsOver10Ms: commits.filter((ms) => ms > 10).length,
      median: {
        totalMs: round(median(this.requests.map((r) => r.totalMs))),
        cpuMs: round(median(this.requests.map((r) => r.cpuMs))),
        ...Object.fromEntries(
          PHASES.map((p) => [`${p}Ms`, round(median(this.requests.map((r) => r.ms[p])))]),
        ),
      },
      slowest: [...this.requests]
        .sort((a, b) => b.totalMs - a.totalMs)
        .slice(0, slowest)
        .map(view),
    };
  }
}

const emptyPhases = (): Record<Phase, number> => ({
  store: 0,
  quota: 0,
  pages: 0,
  meter: 0,
  commit: 0,
  gc: 0,
});
