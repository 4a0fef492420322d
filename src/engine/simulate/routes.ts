import type { AccessMode, Network } from "../network/network.js";
import {
  dijkstra,
  lengthWeight,
  timeWeight,
  type EdgeWeight,
  type ShortestPathTree,
} from "../network/routing.js";
import { pathTo } from "../network/routing.js";
import type { RoadClass } from "../network/types.js";
import type { VehicleClass } from "../trips/types.js";
import type { Anchor } from "./population.js";

/** How a class chooses routes: cars the fastest path, trucks the fastest with major roads preferred, bikes and walkers the shortest. */
export type RoutingProfile = "car" | "truck" | "bike" | "foot";
const PROFILES: RoutingProfile[] = ["car", "truck", "bike", "foot"];
const MODE_OF: Record<RoutingProfile, AccessMode> = { car: "car", truck: "car", bike: "bike", foot: "foot" };

export function routingProfileOf(vehicleClass: VehicleClass): RoutingProfile {
  if (vehicleClass === "heavy_commercial") return "truck";
  if (vehicleClass === "bicycle") return "bike";
  if (vehicleClass === "pedestrian") return "foot";
  return "car";
}

/** Time penalty of heavy trucks off the major road network. */
const TRUCK_PENALTY: Partial<Record<RoadClass, number>> = {
  motorway: 1,
  trunk: 1,
  primary: 1,
  ramp: 1,
  secondary: 1.4,
  tertiary: 2,
};
const TRUCK_PENALTY_MINOR = 3.5;
/** Trees stop here (seconds, or metres for bike and foot): no simulated trip is longer, and large networks stay cheap. */
const TREE_BOUND: Record<RoutingProfile, number> = { car: 5400, truck: 5400 * 3, bike: 30_000, foot: 10_000 };

/** One piece of a route: part of a segment, as fractions of its geometry (from → to in travel order). */
export interface RouteStep {
  segmentIndex: number;
  forward: boolean;
  from: number;
  to: number;
}

export interface PlannedRoute {
  steps: RouteStep[];
  lengthM: number;
}

interface Candidate {
  cost: number;
  steps: () => RouteStep[];
}

/**
 * Routes between anchors. Trips start mostly at a limited set of places
 * (homes, workplaces, attractors), so one full shortest-path tree per start
 * node and profile is cached (bounded LRU) and reused by every later trip.
 */
export class RoutePlanner {
  readonly stats = { trees: 0, hits: 0 };
  private readonly cache = new Map<number, ShortestPathTree>();
  private readonly weights: Record<RoutingProfile, EdgeWeight>;
  private readonly allowed: Record<RoutingProfile, (edge: number) => boolean>;
  private readonly capacity: number;

  constructor(
    private readonly network: Network,
    capacity?: number,
  ) {
    const segs = network.segments;
    const truckFactor = (i: number) => TRUCK_PENALTY[segs[i].roadClass] ?? TRUCK_PENALTY_MINOR;
    this.weights = {
      car: tabulated(network, timeWeight(network)),
      truck: tabulated(network, timeWeight(network, truckFactor)),
      bike: tabulated(network, lengthWeight(network)),
      foot: tabulated(network, lengthWeight(network)),
    };
    const allowedOf = (mode: AccessMode) => {
      const open = Uint8Array.from(segs, (s) => (network.allows(s, mode) ? 1 : 0));
      return (edge: number) => open[edge >> 1] === 1;
    };
    const byMode = { car: allowedOf("car"), bike: allowedOf("bike"), foot: allowedOf("foot") };
    this.allowed = { car: byMode.car, truck: byMode.car, bike: byMode.bike, foot: byMode.foot };
    // About 100 MB of trees at most (cost + via edge: 12 bytes per node).
    this.capacity =
      capacity ?? Math.max(32, Math.min(4096, Math.floor(100e6 / (12 * network.graph.nodeCount))));
  }

  /** Cheapest route for the profile from one anchor to another, or null when unreachable. */
  plan(origin: Anchor, destination: Anchor, profile: RoutingProfile): PlannedRoute | null {
    const best = this.candidates(origin, destination, profile).reduce<Candidate | null>(
      (a, c) => (a === null || c.cost < a.cost ? c : a),
      null,
    );
    if (!best) return null;
    const steps = best.steps();
    const segs = this.network.segments;
    const lengthM = steps.reduce((sum, s) => sum + Math.abs(s.to - s.from) * segs[s.segmentIndex].lengthM, 0);
    return { steps, lengthM };
  }

  private candidates(origin: Anchor, destination: Anchor, profile: RoutingProfile): Candidate[] {
    const { edgeFrom, edgeTo } = this.network.graph;
    const w = this.weights[profile];
    const allowed = this.allowed[profile];
    const i = origin.segmentIndex;
    const j = destination.segmentIndex;
    const f = origin.fraction;
    const g = destination.fraction;
    const out: Candidate[] = [];
    const usable = (edge: number) => edgeFrom[edge] >= 0 && allowed(edge);
    if (i === j) {
      if (g > f && usable(2 * i)) out.push(direct(i, true, f, g, (g - f) * w(2 * i)));
      if (g < f && usable(2 * i + 1)) out.push(direct(i, false, f, g, (f - g) * w(2 * i + 1)));
    }
    const departures = [
      { edge: 2 * i, node: edgeTo[2 * i], cost: (1 - f) * w(2 * i), step: step(i, true, f, 1) },
      { edge: 2 * i + 1, node: edgeTo[2 * i + 1], cost: f * w(2 * i + 1), step: step(i, false, f, 0) },
    ].filter((d) => usable(d.edge));
    const arrivals = [
      { edge: 2 * j, node: edgeFrom[2 * j], cost: g * w(2 * j), step: step(j, true, 0, g) },
      {
        edge: 2 * j + 1,
        node: edgeFrom[2 * j + 1],
        cost: (1 - g) * w(2 * j + 1),
        step: step(j, false, 1, g),
      },
    ].filter((a) => usable(a.edge));
    for (const dep of departures) {
      const tree = this.tree(dep.node, profile);
      for (const arr of arrivals) {
        const mid = tree.cost[arr.node];
        if (mid === Infinity) continue;
        out.push({
          cost: dep.cost + mid + arr.cost,
          steps: () => [dep.step, ...this.fullSteps(tree, arr.node), arr.step],
        });
      }
    }
    return out;
  }

  private fullSteps(tree: ShortestPathTree, target: number): RouteStep[] {
    return (pathTo(this.network, tree, target) ?? []).map((edge) =>
      (edge & 1) === 0 ? step(edge >> 1, true, 0, 1) : step(edge >> 1, false, 1, 0),
    );
  }

  private tree(node: number, profile: RoutingProfile): ShortestPathTree {
    const key = PROFILES.indexOf(profile) * this.network.graph.nodeCount + node;
    const hit = this.cache.get(key);
    if (hit) {
      this.stats.hits++;
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const tree = dijkstra(this.network, node, this.weights[profile], {
      allowed: this.allowed[profile],
      maxCost: TREE_BOUND[profile],
    });
    this.stats.trees++;
    this.cache.set(key, tree);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
    return tree;
  }
}

export function modeOfProfile(profile: RoutingProfile): AccessMode {
  return MODE_OF[profile];
}

/** The weight read from a table: Dijkstra calls it for every edge it relaxes. */
function tabulated(network: Network, weight: EdgeWeight): EdgeWeight {
  const table = new Float64Array(network.segments.length * 2);
  for (let e = 0; e < table.length; e++) table[e] = weight(e);
  return (edge) => table[edge];
}

function step(segmentIndex: number, forward: boolean, from: number, to: number): RouteStep {
  return { segmentIndex, forward, from, to };
}

function direct(i: number, forward: boolean, f: number, g: number, cost: number): Candidate {
  return { cost, steps: () => [step(i, forward, f, g)] };
}
