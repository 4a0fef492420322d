import type { Network } from "../network/network.js";
import type { TripColumns } from "../trips/columns.js";
import { IdIndex } from "./id-index.js";
import type { OdTrip } from "./od-aggregate.js";

/**
 * Presents trip i of a column chunk as an OdTrip without allocating per trip:
 * one reusable object whose path arrays are refilled (segment ids mapped to
 * network indexes). Callers must not keep it across `load` calls.
 *
 * Given the only segments whose steps matter (those meeting pass-through
 * zones), the path holds only the steps on them, each with its step number
 * (`steps`, so zone visits keep their order along the whole path): a bit per
 * low 16 bits of their ids rules most steps out at one array read, where
 * mapping every id costs a hash look-up.
 */
export class TripView {
  readonly trip: OdTrip;
  private segments = new Int32Array(256);
  private forward = new Uint8Array(256);
  private steps = new Int32Array(256);
  private readonly segmentIndex: IdIndex;
  /** Bit (id & 0xffff) set for the ids of the segments that matter; null: all matter. */
  private readonly candidateBits: Int32Array | null = null;
  /** Per segment index: 1 when its steps matter (with candidateBits). */
  private readonly matters: Uint8Array | null = null;

  constructor(network: Network, onlySegments?: Iterable<number>) {
    this.segmentIndex = new IdIndex(network.segments.map((s) => s.id));
    if (onlySegments) {
      this.candidateBits = new Int32Array(2048);
      this.matters = new Uint8Array(network.size);
      for (const index of onlySegments) {
        const low = network.segments[index].id & 0xffff;
        this.candidateBits[low >>> 5] |= 1 << (low & 31);
        this.matters[index] = 1;
      }
    }
    this.trip = {
      origin: [0, 0],
      destination: [0, 0],
      segments: this.segments,
      forward: this.forward,
      steps: undefined,
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
    t.device = cols.devices[cols.deviceIndex[i]];
    const from = cols.pathStart[i];
    const n = cols.pathStart[i + 1] - from;
    if (n > this.segments.length) this.grow(n);
    if (!this.candidateBits) {
      const k = this.loadSteps(cols, from, n);
      t.segments = this.segments.subarray(0, k);
      t.forward = this.forward.subarray(0, k);
      return t;
    }
    // Most paths meet no segment that matters: no views made for them.
    const k = this.loadMatteringSteps(cols, from, n);
    t.segments = k === 0 ? NO_SEGMENTS : this.segments.subarray(0, k);
    t.forward = k === 0 ? NO_DIRECTIONS : this.forward.subarray(0, k);
    t.steps = k === 0 ? NO_SEGMENTS : this.steps.subarray(0, k);
    return t;
  }

  /** Maps every step; returns how many are on the network (the others are skipped). */
  private loadSteps(cols: TripColumns, from: number, n: number): number {
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
    return k;
  }

  /** Maps only the steps on segments that matter, with their step numbers; returns how many. */
  private loadMatteringSteps(cols: TripColumns, from: number, n: number): number {
    const { segments, forward, steps, segmentIndex } = this;
    const bits = this.candidateBits!;
    const matters = this.matters!;
    const ids = cols.pathSegmentId;
    const directions = cols.pathForward;
    let k = 0;
    for (let j = from; j < from + n; j++) {
      const low = ids[j] & 0xffff;
      if ((bits[low >>> 5] & (1 << (low & 31))) === 0) continue;
      const index = segmentIndex.indexOf(ids[j]);
      if (index < 0 || matters[index] === 0) continue;
      segments[k] = index;
      forward[k] = directions[j];
      steps[k] = j - from;
      k++;
    }
    return k;
  }

  private grow(n: number): void {
    const size = Math.max(n, this.segments.length * 2);
    this.segments = new Int32Array(size);
    this.forward = new Uint8Array(size);
    this.steps = new Int32Array(size);
  }
}

const NO_SEGMENTS = new Int32Array(0);
const NO_DIRECTIONS = new Uint8Array(0);
