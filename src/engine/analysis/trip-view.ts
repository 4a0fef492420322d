import type { Network } from "../network/network.js";
import type { TripColumns } from "../trips/columns.js";
import { IdIndex } from "./id-index.js";
import type { OdTrip } from "./od-aggregate.js";

/**
 * Presents trip i of a column chunk as an OdTrip without allocating per trip:
 * one reusable object whose path arrays are refilled (segment ids mapped to
 * network indexes). Callers must not keep it across `load` calls.
 */
export class TripView {
  readonly trip: OdTrip;
  private segments = new Int32Array(256);
  private forward = new Uint8Array(256);
  private readonly segmentIndex: IdIndex;

  constructor(network: Network) {
    this.segmentIndex = new IdIndex(network.segments.map((s) => s.id));
    this.trip = {
      origin: [0, 0],
      destination: [0, 0],
      segments: this.segments,
      forward: this.forward,
      startT: 0,
      endT: 0,
      groups: [],
      weight: 1,
    };
  }

  load(cols: TripColumns, i: number, groups: readonly number[], weight: number): OdTrip {
    const t = this.trip;
    t.origin[0] = cols.originLon[i];
    t.origin[1] = cols.originLat[i];
    t.destination[0] = cols.destLon[i];
    t.destination[1] = cols.destLat[i];
    t.startT = cols.startT[i];
    t.endT = cols.endT[i];
    t.groups = groups;
    t.weight = weight;
    t.lengthM = cols.lengthM[i];
    t.purpose = cols.purpose[i];
    t.incomeBand = cols.incomeBand[i];
    const from = cols.pathStart[i];
    const n = cols.pathStart[i + 1] - from;
    if (n > this.segments.length) this.grow(n);
    const { segments, forward, segmentIndex } = this;
    const ids = cols.pathSegmentId;
    const directions = cols.pathForward;
    let k = 0;
    for (let j = from; j < from + n; j++) {
      const index = segmentIndex.indexOf(ids[j]);
      if (index < 0) continue; // segment no longer in the network (re-import); skip it
      segments[k] = index;
      forward[k] = directions[j];
      k++;
    }
    t.segments = this.segments.subarray(0, k);
    t.forward = this.forward.subarray(0, k);
    return t;
  }

  private grow(n: number): void {
    const size = Math.max(n, this.segments.length * 2);
    this.segments = new Int32Array(size);
    this.forward = new Uint8Array(size);
  }
}
