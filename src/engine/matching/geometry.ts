import type { Network } from "../network/network.js";
import type { LonLat } from "../network/types.js";
import type { MatchedTrip } from "../trips/types.js";

/**
 * The line a matched trip drove: its segments in travel direction, the first
 * cut at the origin and the last at the destination (for display and export).
 */
export function matchedLine(network: Network, trip: MatchedTrip): LonLat[] {
  const line: LonLat[] = [];
  trip.path.forEach((step, i) => {
    const segment = network.segmentById(step.segmentId);
    if (!segment) throw new Error(`unknown segment ${step.segmentId}`);
    let coords = step.forward ? segment.coords : [...segment.coords].reverse();
    const first = i === 0;
    const last = i === trip.path.length - 1;
    if (first || last) {
      const start = first ? trip.origin : coords[0];
      const end = last ? trip.destination : coords[coords.length - 1];
      coords = network.ruler.lineSlice(start, end, coords) as LonLat[];
    }
    for (const c of coords) {
      const prev = line[line.length - 1];
      if (!prev || prev[0] !== c[0] || prev[1] !== c[1]) line.push(c);
    }
  });
  return line;
}
