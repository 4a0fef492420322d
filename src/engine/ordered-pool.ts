import { Piscina } from "piscina";

/**
 * A piscina pool whose queued tasks start in the order they were asked. By default, each time a worker
 * frees up, piscina starts the queue's first task, takes the next one too and, finding no worker for it,
 * puts it back at the queue's end: on one thread, five tasks asked at once start 1, 3, 5, 4, 2. The ingest
 * takes matched groups in reading order, so it waited for a group sent early and started late while the
 * later groups' outcomes piled up, to be kept and tallied at the end with the workers idle
 * (docs/performance.md, "Stop 45"); a demo simulation was overtaken the same way. Only for tasks without an
 * abort signal: piscina 5.3 queues those apart, where this option starts the latest first (the heavy-request
 * pool keeps its own line instead).
 */
export function orderedPool(options: NonNullable<ConstructorParameters<typeof Piscina>[0]>): Piscina {
  return new Piscina({ ...options, stricterFIFO: true });
}
