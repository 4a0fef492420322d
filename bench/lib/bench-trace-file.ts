/**
 * Writes the ingest bench's trace file and prints its path: `bench-trace-file.ts TRIPS SAMPLING_S DIR [uuid]`.
 * `ingest-ab` runs it as a child process, so that the process comparing two trees runs neither tree's code
 * but through its runners (simulating the file ran this tree's network and routing code there first).
 */
import { join } from "node:path";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { Network } from "../../src/engine/network/network.js";
import { benchTraceFile, withUuidDeviceIds } from "../ingest.js";
import { MONACO_PBF } from "../../test/helpers/bundled-data.js";

const [trips, samplingS, dir, ids] = process.argv.slice(2);
const network = new Network("mc", await readOsmSegments(MONACO_PBF));
const simulated = benchTraceFile(network, Number(trips), Number(samplingS), join(dir, "traces")).months[0]
  .traces;
process.stdout.write(ids === "uuid" ? withUuidDeviceIds(simulated) : simulated);
