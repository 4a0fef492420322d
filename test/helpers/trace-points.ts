import { readTraceFile } from "../../src/engine/ingest/read-traces.js";
import type { GpsPoint } from "../../src/engine/trips/types.js";

/** Every readable fix of a trace file (any format the product reads), in file order; bad rows are dropped. */
export async function readTracePoints(file: string): Promise<GpsPoint[]> {
  const points: GpsPoint[] = [];
  for await (const batch of readTraceFile(file)) {
    for (const record of batch) {
      if (record.point) points.push({ lon: record.point.lon, lat: record.point.lat, t: record.point.t });
    }
  }
  return points;
}
