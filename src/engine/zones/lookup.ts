import type { LonLat } from "../network/types.js";
import { grown } from "../typed-arrays.js";
import { headingMatches, type TripPath, type ZoneVisit } from "./assign.js";
import type { CompiledZoneSet } from "./compile.js";
import { bboxOfPoints, bearingOf, pointInMultiPolygon, type PolygonRings } from "./geometry.js";

/**
 * Zone visits of one trip in reusable typed arrays (zone, position along the
 * path), so assigning a million trips allocates nothing per trip.
 */
export class VisitList {
  zones = new Int32Array(16);
  positions = new Float64Array(16);
  count = 0;

  clear(): void {
    this.count = 0;
  }

  push(zone: number, position: number): void {
    if (this.count === this.zones.length) this.grow();
    this.zones[this.count] = zone;
    this.positions[this.count] = position;
    this.count++;
  }

  /** Appends another list's visits (the passed zones after the trip-end zones). */
  append(other: VisitList): void {
    for (let i = 0; i < other.count; i++) this.push(other.zones[i], other.positions[i]);
  }

  toArray(): ZoneVisit[] {
    return Array.from({ length: this.count }, (_, i) => ({
      zone: this.zones[i],
      position: this.positions[i],
    }));
  }

  private grow(): void {
    const zones = new Int32Array(this.zones.length * 2);
    const positions = new Float64Array(this.zones.length * 2);
    zones.set(this.zones);
    positions.set(this.positions);
    this.zones = zones;
    this.positions = positions;
  }
}

/**
 * [w, s, e, n] of a multipolygon that is one axis-aligned rectangle without holes (a closed ring of
 * four axis-parallel edges, as grid zones are), else null.
 */
export function axisAlignedBox(polygons: PolygonRings[]): [number, number, number, number] | null {
  if (polygons.length !== 1 || polygons[0].length !== 1) return null;
  const ring = polygons[0][0];
  if (ring.length !== 5 || ring[0][0] !== ring[4][0] || ring[0][1] !== ring[4][1]) return null;
  for (let i = 0; i < 4; i++) {
    const sameX = ring[i][0] === ring[i + 1][0];
    const sameY = ring[i][1] === ring[i + 1][1];
    if (sameX === sameY) return null; // a diagonal or a repeated point
  }
  const xs = new Set(ring.map((q) => q[0]));
  const ys = new Set(ring.map((q) => q[1]));
  if (xs.size !== 2 || ys.size !== 2) return null;
  const [w, e] = [...xs].sort((a, b) => a - b);
  const [s, n] = [...ys].sort((a, b) => a - b);
  return [w, s, e, n];
}

/**
 * A uniform grid over the non-pass zones' bounding boxes: each grid cell lists
 * (in zone order) the zones whose box meets it. A point needs one cell look-up
 * and point-in-polygon tests of those few zones, instead of an R-tree search
 * that allocates its result. Same answers as `endZonesAt` (compile.ts).
 */
class EndZoneGrid {
  private readonly w: number;
  private readonly s: number;
  private readonly e: number;
  private readonly n: number;
  private readonly cols: number;
  private readonly rows: number;
  private readonly cellW: number;
  private readonly cellH: number;
  /** CSR: the items of cell c are items[start[c] .. start[c + 1]] (indexes into set.endZones). */
  private readonly start: Int32Array;
  private readonly items: Int32Array;
  /** Per end zone: 1 when it is one axis-aligned rectangle, whose [w, s, e, n] are in `boxes`. */
  private readonly isBox: Uint8Array;
  private readonly boxes: Float64Array;

  constructor(private readonly set: CompiledZoneSet) {
    const boxes = set.endZones.map((z) => bboxOfPoints(z.polygons.flatMap((rings) => rings[0])));
    const rectangles = set.endZones.map((z) => axisAlignedBox(z.polygons));
    this.isBox = Uint8Array.from(rectangles, (r) => (r ? 1 : 0));
    this.boxes = Float64Array.from(rectangles.flatMap((r) => r ?? [0, 0, 0, 0]));
    [this.w, this.s, this.e, this.n] = [
      Math.min(...boxes.map((b) => b[0])),
      Math.min(...boxes.map((b) => b[1])),
      Math.max(...boxes.map((b) => b[2])),
      Math.max(...boxes.map((b) => b[3])),
    ];
    // About four cells per zone: a zone of a tiling covers a few cells, a cell meets a few zones.
    const side = Math.min(1024, Math.max(1, Math.ceil(Math.sqrt(4 * boxes.length))));
    this.cols = this.e > this.w ? side : 1;
    this.rows = this.n > this.s ? side : 1;
    this.cellW = this.e > this.w ? (this.e - this.w) / this.cols : 1;
    this.cellH = this.n > this.s ? (this.n - this.s) / this.rows : 1;
    const spans = boxes.map(([w, s, e, n]) => [this.col(w), this.row(s), this.col(e), this.row(n)]);
    const counts = new Int32Array(this.cols * this.rows + 1);
    const eachCell = (span: number[], visit: (cell: number) => void) => {
      for (let r = span[1]; r <= span[3]; r++)
        for (let c = span[0]; c <= span[2]; c++) visit(r * this.cols + c);
    };
    for (const span of spans) eachCell(span, (cell) => counts[cell + 1]++);
    for (let c = 1; c < counts.length; c++) counts[c] += counts[c - 1];
    this.start = counts;
    this.items = new Int32Array(counts[counts.length - 1]);
    const filled = counts.slice(0, -1);
    spans.forEach((span, i) => eachCell(span, (cell) => (this.items[filled[cell]++] = i)));
  }

  /** Floor division is monotonic, so a point inside a box always falls in a cell the box was filed under. */
  private col(x: number): number {
    return Math.min(this.cols - 1, Math.max(0, Math.floor((x - this.w) / this.cellW)));
  }

  private row(y: number): number {
    return Math.min(this.rows - 1, Math.max(0, Math.floor((y - this.s) / this.cellH)));
  }

  /** Pushes the zones containing p, in ascending zone order, at `position`. */
  zonesAt(p: LonLat, position: number, out: VisitList): void {
    const [x, y] = p;
    if (!(x >= this.w && x <= this.e && y >= this.s && y <= this.n)) return;
    const cell = this.row(y) * this.cols + this.col(x);
    for (let k = this.start[cell]; k < this.start[cell + 1]; k++) {
      const i = this.items[k];
      const end = this.set.endZones[i];
      if (this.isBox[i] === 1 ? this.inBox(i, x, y) : pointInMultiPolygon(p, end.polygons))
        out.push(end.zone, position);
    }
  }

  /** pointInMultiPolygon of a rectangle (boundary inside): four comparisons, no orientation tests. */
  private inBox(i: number, x: number, y: number): boolean {
    const b = this.boxes;
    return x >= b[4 * i] && y >= b[4 * i + 1] && x <= b[4 * i + 2] && y <= b[4 * i + 3];
  }
}

/**
 * Per-trip zone assignment of a compiled zone set with dense look-ups: the
 * pass-through hits of each segment index as typed-array runs (CSR), trip ends
 * through EndZoneGrid. Gives exactly the visits of `originVisits` /
 * `destinationVisits` (assign.ts), in the same order.
 */
export class ZoneLookup {
  /** Hits of segment s are hit*[hitStart[s] .. hitStart[s + 1]]; segments past the end have none. */
  private readonly hitStart: Int32Array;
  private readonly hitZone: Int32Array;
  private readonly hitAtForward: Float64Array;
  private readonly hitAtBackward: Float64Array;
  private readonly hitDx: Float64Array;
  private readonly hitDy: Float64Array;
  private readonly isLine: Uint8Array;
  private readonly grid: EndZoneGrid | null;
  /** Per zone: the trip (tick) that last met it, and its slot among that trip's polygon runs. */
  private readonly seenAt: Int32Array;
  private readonly slotOf: Int32Array;
  private tick = 0;
  private runZone = new Int32Array(16);
  private runPosition = new Float64Array(16);
  private runDx = new Float64Array(16);
  private runDy = new Float64Array(16);

  constructor(readonly set: CompiledZoneSet) {
    const ordered = [...set.passBySegment].sort((a, b) => a[0] - b[0]);
    const segments = ordered.length > 0 ? ordered[ordered.length - 1][0] + 1 : 0;
    const all = ordered.flatMap(([, hits]) => hits);
    this.hitStart = new Int32Array(segments + 1);
    for (const [segment, hits] of ordered) this.hitStart[segment + 1] = hits.length;
    for (let s = 1; s <= segments; s++) this.hitStart[s] += this.hitStart[s - 1];
    this.hitZone = Int32Array.from(all, (h) => h.zone);
    this.hitAtForward = Float64Array.from(all, (h) => h.atForward);
    this.hitAtBackward = Float64Array.from(all, (h) => h.atBackward);
    this.hitDx = Float64Array.from(all, (h) => h.dx);
    this.hitDy = Float64Array.from(all, (h) => h.dy);
    this.isLine = Uint8Array.from(set.zones, (z) => (z.kind === "line" ? 1 : 0));
    this.grid = set.endZones.length > 0 ? new EndZoneGrid(set) : null;
    this.seenAt = new Int32Array(set.zones.length);
    this.slotOf = new Int32Array(set.zones.length);
  }

  /** Pushes the non-pass zones containing the point, in ascending zone order. */
  endZones(p: LonLat, position: number, out: VisitList): void {
    this.grid?.zonesAt(p, position, out);
  }

  /**
   * Pushes the pass-through zones met along the path, each once: gates at their
   * first crossing in a matching heading, then polygons (first entry, heading of
   * the whole run inside), as `passedZones` does.
   */
  passed(trip: TripPath, out: VisitList): void {
    const limit = this.hitStart.length - 1;
    if (limit === 0) return;
    const tick = ++this.tick;
    let runs = 0;
    const { segments, forward, steps } = trip;
    const n = segments.length;
    for (let i = 0; i < n; i++) {
      const segment = segments[i];
      const step = steps ? steps[i] : i;
      if (segment >= limit) continue;
      const end = this.hitStart[segment + 1];
      for (let k = this.hitStart[segment]; k < end; k++) {
        const fwd = forward[i] === 1;
        const zone = this.hitZone[k];
        const dx = fwd ? this.hitDx[k] : -this.hitDx[k];
        const dy = fwd ? this.hitDy[k] : -this.hitDy[k];
        const seen = this.seenAt[zone] === tick;
        if (this.isLine[zone] === 1) {
          if (!seen && headingMatches(this.set.zones[zone], bearingOf(dx, dy))) {
            this.seenAt[zone] = tick;
            out.push(zone, step + (fwd ? this.hitAtForward[k] : this.hitAtBackward[k]));
          }
        } else if (seen) {
          const slot = this.slotOf[zone];
          this.runDx[slot] += dx;
          this.runDy[slot] += dy;
        } else {
          if (runs === this.runZone.length) this.growRuns();
          this.seenAt[zone] = tick;
          this.slotOf[zone] = runs;
          this.runZone[runs] = zone;
          this.runPosition[runs] = step + (fwd ? this.hitAtForward[k] : this.hitAtBackward[k]);
          this.runDx[runs] = dx;
          this.runDy[runs] = dy;
          runs++;
        }
      }
    }
    for (let r = 0; r < runs; r++) {
      const zone = this.runZone[r];
      if (headingMatches(this.set.zones[zone], bearingOf(this.runDx[r], this.runDy[r])))
        out.push(zone, this.runPosition[r]);
    }
  }

  private growRuns(): void {
    this.runZone = grown(this.runZone);
    this.runPosition = grown(this.runPosition);
    this.runDx = grown(this.runDx);
    this.runDy = grown(this.runDy);
  }
}
