import type { Network } from "../../src/engine/network/network.js";
import type { Rng } from "../../src/engine/simulate/rng.js";
import {
  TRACE_SOURCES,
  TRIP_PURPOSES,
  VEHICLE_CLASSES,
  type MatchedTrip,
} from "../../src/engine/trips/types.js";

/** Trips over random segments of the grid, hours and two months, every class and source, some without speed. */
export function randomTrips(network: Network, rng: Rng, n: number): MatchedTrip[] {
  const pick = <T>(list: readonly T[]) => list[rng.int(list.length)];
  return Array.from({ length: n }, (_, i) => {
    let t = Date.UTC(2025, rng.int(2), 1 + rng.int(28), rng.int(24), rng.int(60));
    const path = Array.from({ length: 1 + rng.int(8) }, () => {
      // Under 1 s now and then: counted, but no speed sample.
      const seconds = rng.int(4) === 0 ? 0.5 : 2 + rng.int(60);
      const step = {
        segmentId: pick(network.segments).id,
        forward: rng.int(2) === 0,
        enterT: t,
        exitT: t + seconds * 1000,
      };
      t += seconds * 1000;
      return step;
    });
    const band = rng.int(6) - 1;
    return {
      deviceId: `d${i}`,
      vehicleClass: pick(VEHICLE_CLASSES),
      source: pick(TRACE_SOURCES),
      origin: [0, 0],
      destination: [0, 0],
      startT: path[0].enterT,
      endT: t,
      lengthM: 100,
      path,
      ...(rng.int(3) > 0 ? { purpose: pick(TRIP_PURPOSES) } : {}),
      ...(band >= 0 || rng.int(2) === 0 ? { incomeBand: band } : {}),
    };
  });
}
