import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Bytes in V8's heap after a full collection (without `--expose-gc`: V8 gives `gc` to contexts made after the flag). */
export function heapUsedAfterGc(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return getHeapStatistics().used_heap_size;
}
