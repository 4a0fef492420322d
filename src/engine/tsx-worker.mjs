// A piscina worker entry for running from TypeScript sources (tests, `npm run streetflow`): on Node 20 the
// `--import tsx` flag does not reach worker threads, so this registers tsx's loader in the thread, then
// loads the real worker module (workerData.tsxTarget, a file URL) and hands piscina its default export.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
const target = await import(workerData.tsxTarget);
export default target.default;
