import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A full garbage collection now, so that a measured pass does not pay for the garbage its set-up left
 * behind (thousands of simulated traces and their routes): a fresh process starts without it. Works
 * without `--expose-gc` on the command line: V8 gives `gc` to contexts made after the flag is set.
 */
export function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}
