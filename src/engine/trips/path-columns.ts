import type { LonLat } from "../network/types.js";
import type { MatchedTrip, PathStep, TraceSource, TripPurpose, VehicleClass } from "./types.js";

/** Path steps `from` … `to` of columns that hold many trips' steps (as matching workers send them back). */
export interface PathColumns {
  readonly from: number;
  readonly to: number;
  readonly segmentId: Float64Array;
  readonly forward: Uint8Array;
  /** Epoch ms. */
  readonly enterT: Float64Array;
  readonly exitT: Float64Array;
}

/**
 * A matched trip's fields as own properties, given whole to the constructor; a subclass gives its `path` as a
 * getter, so every such trip shares one shape.
 */
export abstract class TripFields {
  // Declared, not defined: only the fields a trip has become properties, in the order given.
  declare readonly deviceId: string;
  declare readonly vehicleClass: VehicleClass;
  declare readonly source: TraceSource;
  declare readonly origin: LonLat;
  declare readonly destination: LonLat;
  declare readonly startT: number;
  declare readonly endT: number;
  declare readonly lengthM: number;
  declare readonly purpose?: TripPurpose;
  declare readonly incomeBand?: number;

  constructor(fields: Omit<MatchedTrip, "path">) {
    Object.assign(this, fields);
  }
}

/**
 * A matched trip whose path stays in columns: `path` makes the step objects each time it is read, and the loops
 * that read every step of every trip (tallies, trip columns) read the columns in place (`stepsOf`). Matched on a
 * worker, a trip came back as ~50 step objects made on the ingest's thread: ~10 µs a trip, a third of that thread's
 * CPU while it kept two workers fed (docs/performance.md, "Stop 55").
 */
export class ColumnarPathTrip extends TripFields implements MatchedTrip {
  readonly #steps: PathColumns;

  constructor(fields: Omit<MatchedTrip, "path">, steps: PathColumns) {
    super(fields);
    this.#steps = steps;
  }

  get path(): PathStep[] {
    const { from, to, segmentId, forward, enterT, exitT } = this.#steps;
    const path: PathStep[] = [];
    for (let j = from; j < to; j++)
      path.push({ segmentId: segmentId[j], forward: forward[j] === 1, enterT: enterT[j], exitT: exitT[j] });
    return path;
  }

  /** The trip's steps as columns, when it keeps them so. */
  static stepsOf(trip: MatchedTrip): PathColumns | undefined {
    return #steps in trip ? trip.#steps : undefined;
  }
}

/** How many path steps a trip has, without making them. */
export function stepCountOf(trip: MatchedTrip): number {
  const steps = ColumnarPathTrip.stepsOf(trip);
  return steps ? steps.to - steps.from : trip.path.length;
}
