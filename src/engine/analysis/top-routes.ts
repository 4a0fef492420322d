/**
 * Top routes: per subject (an origin-destination zone pair, or a zone), the trips' matched paths grouped
 * into routes and the most used routes per device group, day type and day part.
 *
 * A path is a trip's sequence of network segments with their travel directions. Two paths are the same
 * route when the length of the directed segments they share is at least ROUTE_OVERLAP_SHARE of the
 * longer path's length. Paths are grouped greedily, most used first: a path joins the most used route
 * whose representative it overlaps that much, else it starts a route of its own and represents it.
 * So a route's representative is its most used path, and the grouping depends only on the trips.
 */

/** Shared length, as a share of the longer path, from which two paths are the same route. */
export const ROUTE_OVERLAP_SHARE = 0.8;

/** Room for this many day types (day parts) in a slice cell's number. */
const SLOTS = 1024;

/** A directed step: network segment index × 2 + 1 when travelled along its geometry. */
const codeOf = (segment: number, forward: number) => segment * 2 + (forward ? 1 : 0);

/** What the tally reads of a trip (its path arrays are read during the call only). */
export interface RouteTrip {
  segments: ArrayLike<number>;
  forward: ArrayLike<number>;
  startT: number;
  endT: number;
  weight: number;
  groups: readonly number[];
}

export interface RouteSlice {
  dayTypes: readonly number[];
  dayParts: readonly number[];
}

/** One route of a subject in one slice, ranked among the subject's routes there. */
export interface TopRouteRow {
  subject: number;
  group: number;
  dayType: number;
  dayPart: number;
  /** 1 = the most used. */
  rank: number;
  /** The route's number in the analysis, one per representative path (see `routePath`). */
  route: number;
  /** Summed expansion weight of the route's trips, and of all the subject's trips, in the slice. */
  weight: number;
  subjectWeight: number;
  /** Sampled trips on the route. */
  sample: number;
  /** Mean duration of the sampled trips on the route, seconds. */
  avgDurationS: number;
  /** Length of the route's representative path, metres. */
  lengthM: number;
}

/** Directed steps of every distinct path, in fixed-size chunks (no copying as they grow). */
class PathPool {
  private static readonly CHUNK = 1 << 22;
  private readonly chunks: Int32Array[] = [];
  private used = PathPool.CHUNK;
  /** Per path id: its chunk, offset, length. */
  readonly chunk: number[] = [];
  readonly offset: number[] = [];
  readonly size: number[] = [];

  add(codes: Int32Array, n: number): number {
    if (this.used + n > PathPool.CHUNK) {
      this.chunks.push(new Int32Array(Math.max(PathPool.CHUNK, n)));
      this.used = 0;
    }
    const chunk = this.chunks.length - 1;
    this.chunks[chunk].set(codes.subarray(0, n), this.used);
    this.chunk.push(chunk);
    this.offset.push(this.used);
    this.size.push(n);
    this.used += n;
    return this.chunk.length - 1;
  }

  steps(id: number): Int32Array {
    return this.chunks[this.chunk[id]].subarray(this.offset[id], this.offset[id] + this.size[id]);
  }

  equals(id: number, codes: Int32Array, n: number): boolean {
    if (this.size[id] !== n) return false;
    const steps = this.steps(id);
    for (let k = 0; k < n; k++) if (steps[k] !== codes[k]) return false;
    return true;
  }
}

/** Growable typed columns of the (subject, trip) memberships. */
class Memberships {
  count = 0;
  subject = new Float64Array(1024);
  path = new Int32Array(1024);
  weight = new Float64Array(1024);
  durationS = new Float64Array(1024);
  /** Index into the tally's slice list (groups × day types × day parts of the trip). */
  slice = new Int32Array(1024);

  push(subject: number, path: number, weight: number, durationS: number, slice: number): void {
    if (this.count === this.subject.length) this.grow();
    const i = this.count++;
    this.subject[i] = subject;
    this.path[i] = path;
    this.weight[i] = weight;
    this.durationS[i] = durationS;
    this.slice[i] = slice;
  }

  private grow(): void {
    const n = this.subject.length * 2;
    const copy = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T) => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.subject = copy(this.subject, (k) => new Float64Array(k));
    this.path = copy(this.path, (k) => new Int32Array(k));
    this.weight = copy(this.weight, (k) => new Float64Array(k));
    this.durationS = copy(this.durationS, (k) => new Float64Array(k));
    this.slice = copy(this.slice, (k) => new Int32Array(k));
  }
}

/** 53-bit hash of n codes (two 32-bit FNV-1a-like lanes), for finding a path seen before. */
function hashOf(codes: Int32Array, n: number): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ n;
  for (let k = 0; k < n; k++) {
    a = Math.imul(a ^ codes[k], 0x01000193);
    b = Math.imul(b ^ (codes[k] + 0x9e3779b9), 0x5bd1e995);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

/** A route: its representative path and the shared-length test against it. */
interface Route {
  path: number;
  lengthM: number;
  /** Directed steps of the representative (each once). */
  codes: Set<number>;
}

/**
 * Collects trips per subject, then groups each subject's paths into routes and ranks them per slice.
 * Memory: each distinct path's steps once, and a few numbers per (subject, trip).
 */
export class TopRoutesTally {
  private readonly pool = new PathPool();
  private readonly byHash = new Map<number, number | number[]>();
  private readonly memberships = new Memberships();
  /** Slice lists as seen ("g,g|dt,dt|dp,dp" → index): trips of one kind share one. */
  private readonly sliceIndex = new Map<string, number>();
  private readonly slices: { groups: number[]; dayTypes: number[]; dayParts: number[] }[] = [];
  private codes = new Int32Array(256);
  /** Representative path of each numbered route (route number − 1), after `rows`. */
  private readonly routePaths: number[] = [];
  /** Route number of a representative path: subjects sharing a route's path share its number. */
  private readonly numberOfPath = new Map<number, number>();

  constructor(
    /** Length of a network segment, metres. */
    private readonly lengthOf: (segment: number) => number,
    /** Routes kept per subject and slice. */
    private readonly top: number,
  ) {}

  /** A trip and the subjects it counts for (each once); a trip without a path is left out. */
  add(subjects: Iterable<number>, trip: RouteTrip, slice: RouteSlice): void {
    const n = trip.segments.length;
    if (n === 0) return;
    let path = -1;
    let sliceIndex = -1;
    const durationS = (trip.endT - trip.startT) / 1000;
    for (const subject of subjects) {
      if (path < 0) {
        path = this.pathOf(trip);
        sliceIndex = this.sliceOf(trip.groups, slice);
      }
      this.memberships.push(subject, path, trip.weight, durationS, sliceIndex);
    }
  }

  private pathOf(trip: RouteTrip): number {
    const n = trip.segments.length;
    if (n > this.codes.length) this.codes = new Int32Array(Math.max(n, this.codes.length * 2));
    const codes = this.codes;
    for (let k = 0; k < n; k++) codes[k] = codeOf(trip.segments[k], trip.forward[k]);
    const hash = hashOf(codes, n);
    const seen = this.byHash.get(hash);
    let id = -1;
    if (typeof seen === "number") id = this.pool.equals(seen, codes, n) ? seen : -1;
    else if (seen) id = seen.find((p) => this.pool.equals(p, codes, n)) ?? -1;
    if (id >= 0) return id;
    id = this.pool.add(codes, n);
    if (seen === undefined) this.byHash.set(hash, id);
    else this.byHash.set(hash, typeof seen === "number" ? [seen, id] : [...seen, id]);
    return id;
  }

  private sliceOf(groups: readonly number[], slice: RouteSlice): number {
    const key = `${groups.join(",")}|${slice.dayTypes.join(",")}|${slice.dayParts.join(",")}`;
    let index = this.sliceIndex.get(key);
    if (index === undefined) {
      index = this.slices.length;
      this.slices.push({ groups: [...groups], dayTypes: [...slice.dayTypes], dayParts: [...slice.dayParts] });
      this.sliceIndex.set(key, index);
    }
    return index;
  }

  /** Directed steps of a numbered route's representative: network segment index and direction. */
  routePath(route: number): { segment: number; forward: boolean }[] {
    return [...this.pool.steps(this.routePaths[route - 1])].map((c) => ({
      segment: c >> 1,
      forward: (c & 1) === 1,
    }));
  }

  /**
   * The top routes of every subject and slice, ordered subject → group → day type → day part → rank.
   * Routes are numbered 1, 2, … in that order of first appearance, one number per representative path
   * (the same path representing routes of two subjects keeps one number); ties in traffic rank by the
   * routes' use over all the subject's trips (their order of grouping).
   */
  rows(): TopRouteRow[] {
    const m = this.memberships;
    // Memberships by subject, in the order they came (one pass; only the subjects are sorted).
    const bySubject = new Map<number, number[]>();
    for (let i = 0; i < m.count; i++) {
      const list = bySubject.get(m.subject[i]);
      if (list) list.push(i);
      else bySubject.set(m.subject[i], [i]);
    }
    const out: TopRouteRow[] = [];
    for (const subject of [...bySubject.keys()].sort((a, b) => a - b))
      this.subjectRows(bySubject.get(subject)!, out);
    return out;
  }

  private subjectRows(members: number[], out: TopRouteRow[]): void {
    const m = this.memberships;
    const subject = m.subject[members[0]];
    const routeOfPath = this.groupRoutes(members);
    // Per slice cell (group, day type, day part as one number): route → sums, and the subject's total.
    const cells = new Map<number, { total: number; routes: Map<number, [number, number, number]> }>();
    for (const i of members) {
      const route = routeOfPath.get(m.path[i])!;
      const s = this.slices[m.slice[i]];
      for (const g of s.groups)
        for (const dt of s.dayTypes)
          for (const dp of s.dayParts) {
            const key = (g * SLOTS + dt) * SLOTS + dp;
            let cell = cells.get(key);
            if (!cell) cells.set(key, (cell = { total: 0, routes: new Map() }));
            cell.total += m.weight[i];
            const sums = cell.routes.get(route.index) ?? [0, 0, 0];
            sums[0] += m.weight[i];
            sums[1]++;
            sums[2] += m.durationS[i];
            cell.routes.set(route.index, sums);
          }
    }
    const routes = [...new Set(routeOfPath.values())].sort((a, b) => a.index - b.index);
    for (const key of [...cells.keys()].sort((a, b) => a - b)) {
      const cell = cells.get(key)!;
      const [group, dayType, dayPart] = [
        Math.floor(key / SLOTS / SLOTS),
        Math.floor(key / SLOTS) % SLOTS,
        key % SLOTS,
      ];
      const ranked = [...cell.routes].sort((a, b) => b[1][0] - a[1][0] || a[0] - b[0]).slice(0, this.top);
      ranked.forEach(([index, [weight, sample, durationS]], k) => {
        const path = routes[index].route.path;
        let number = this.numberOfPath.get(path);
        if (number === undefined) {
          this.routePaths.push(path);
          number = this.routePaths.length;
          this.numberOfPath.set(path, number);
        }
        out.push({
          subject,
          group,
          dayType,
          dayPart,
          rank: k + 1,
          route: number,
          weight,
          subjectWeight: cell.total,
          sample,
          avgDurationS: durationS / sample,
          lengthM: routes[index].route.lengthM,
        });
      });
    }
  }

  /**
   * Groups a subject's distinct paths into routes, most used first (summed weight, then trips, then
   * the steps' order for a deterministic tie). Candidate routes come from an index of the routes by
   * directed step: a path overlapping a route by ≥ 80 % of the longer length must share with it a step
   * among its rarest steps making up more than 20 % of its own length (prefix filtering).
   */
  private groupRoutes(members: number[]): Map<number, { index: number; route: Route }> {
    const m = this.memberships;
    const use = new Map<number, [number, number]>();
    for (const i of members) {
      const u = use.get(m.path[i]) ?? [0, 0];
      u[0] += m.weight[i];
      u[1]++;
      use.set(m.path[i], u);
    }
    const paths = [...use.keys()].sort(
      (a, b) => use.get(b)![0] - use.get(a)![0] || use.get(b)![1] - use.get(a)![1] || this.compareSteps(a, b),
    );
    const routeOfPath = new Map<number, { index: number; route: Route }>();
    // One path (most pairs of a fine grid): its own route, no index needed.
    if (paths.length === 1) {
      const steps = this.pool.steps(paths[0]);
      const lengthM = this.distinctLength(steps);
      routeOfPath.set(paths[0], { index: 0, route: { path: paths[0], lengthM, codes: new Set() } });
      return routeOfPath;
    }
    const routes: Route[] = [];
    const routesWithStep = new Map<number, number[]>();
    const entries: { index: number; route: Route }[] = [];
    for (const path of paths) {
      const steps = this.pool.steps(path);
      const lengths = new Map<number, number>();
      for (const c of steps) lengths.set(c, this.lengthOf(c >> 1));
      const lengthM = [...lengths.values()].reduce((a, b) => a + b, 0);
      const found = this.matchingRoute(lengths, lengthM, routes, routesWithStep);
      if (found >= 0) {
        routeOfPath.set(path, entries[found]);
        continue;
      }
      const route: Route = { path, lengthM, codes: new Set(lengths.keys()) };
      const index = routes.length;
      routes.push(route);
      entries.push({ index, route });
      for (const c of route.codes) {
        const list = routesWithStep.get(c);
        if (list) list.push(index);
        else routesWithStep.set(c, [index]);
      }
      routeOfPath.set(path, entries[index]);
    }
    return routeOfPath;
  }

  /** Length of the distinct directed steps (a step met twice counts once, as in the overlap test). */
  private distinctLength(steps: Int32Array): number {
    const seen = new Set<number>();
    let length = 0;
    for (const c of steps)
      if (!seen.has(c)) {
        seen.add(c);
        length += this.lengthOf(c >> 1);
      }
    return length;
  }

  /** The most used route (lowest index) the path overlaps by the share; −1 when none. */
  private matchingRoute(
    lengths: Map<number, number>,
    lengthM: number,
    routes: Route[],
    routesWithStep: Map<number, number[]>,
  ): number {
    if (routes.length === 0) return -1;
    // Rarest steps first, until they make up more than (1 − share) of the path's length.
    const steps = [...lengths.keys()].sort(
      (a, b) => (routesWithStep.get(a)?.length ?? 0) - (routesWithStep.get(b)?.length ?? 0) || a - b,
    );
    const candidates = new Set<number>();
    let covered = 0;
    for (const c of steps) {
      for (const r of routesWithStep.get(c) ?? []) candidates.add(r);
      covered += lengths.get(c)!;
      if (covered > (1 - ROUTE_OVERLAP_SHARE) * lengthM) break;
    }
    let best = -1;
    for (const r of candidates) {
      if (best >= 0 && r > best) continue;
      const route = routes[r];
      const longer = Math.max(route.lengthM, lengthM);
      if (Math.min(route.lengthM, lengthM) < ROUTE_OVERLAP_SHARE * longer) continue;
      let shared = 0;
      for (const [c, len] of lengths) if (route.codes.has(c)) shared += len;
      if (shared >= ROUTE_OVERLAP_SHARE * longer) best = r;
    }
    return best;
  }

  private compareSteps(a: number, b: number): number {
    const x = this.pool.steps(a);
    const y = this.pool.steps(b);
    for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k] - y[k];
    return x.length - y.length;
  }
}
