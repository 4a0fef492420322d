/**
 * The demo's trace simulation on a worker thread (see demo-simulation.ts): builds the network from the
 * segments it was started with, then writes each asked simulation's month files, naming each file on the
 * task's port as soon as it is complete, and null after the last (none when it fails).
 */
import { workerData, type MessagePort } from "node:worker_threads";
import { Network } from "../engine/network/network.js";
import type { Segment } from "../engine/network/types.js";
import { Simulation, writeTraces, type SimulateOptions } from "../engine/simulate/index.js";

export interface SimulationTask {
  dir: string;
  options: SimulateOptions;
  port: MessagePort;
}

const { country, segments } = workerData as { country: string; segments: Segment[] };
const network = new Network(country, segments);

export default function simulateMonths({ dir, options, port }: SimulationTask): number {
  try {
    const written = writeTraces(new Simulation(network, options).trips(), dir, (month) =>
      port.postMessage(month.traces),
    );
    // The end; on a failure the task's rejection tells instead.
    port.postMessage(null);
    return written.trips;
  } finally {
    port.close();
  }
}
