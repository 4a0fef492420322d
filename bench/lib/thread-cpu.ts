import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU nanoseconds so far of each of this process's threads, by thread id, from /proc (Linux's schedstat:
 * finer than the clock ticks of stat, so a single request's share shows). Empty where /proc is not there.
 */
export function threadCpuNs(): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      out.set(Number(tid), Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}
