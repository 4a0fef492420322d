import type { AccessMode, Network } from "../network/network.js";
import { buildBallTable, RouteBalls, type BallTable } from "../network/route-balls.js";
import { DijkstraWorkspace } from "../network/routing.js";
import { DEFAULT_MATCH_OPTIONS } from "./options.js";

/**
 * What matching needs per network and travel mode, built once and reused by
 * every trip: edge lengths with closed edges at Infinity (so routing needs no
 * filter callback), one Dijkstra workspace (matching is synchronous, so
 * trips never interleave on it) and the cached route balls built on it.
 *
 * A class, not an object literal: V8 stops tracking the class of a literal's typed-array fields when
 * the literal is evaluated a second time, and the second context (the first bicycle or walking trip,
 * mid pass) then threw away every compiled function that had relied on them (a cold pass compiled
 * `transitionLogProbs`, `recordGroup`, `addApproaches` and `candidatesOf` again for it).
 */
export class MatchContext {
  constructor(
    readonly network: Network,
    readonly mode: AccessMode,
    readonly edgeCostM: Float64Array,
    readonly workspace: DijkstraWorkspace,
    readonly routes: RouteBalls,
    readonly lines: SegmentLines,
    /** 1 where the mode may use the segment: read in the candidate search instead of each segment object. */
    readonly allowed: Uint8Array,
  ) {}
}

/**
 * Every segment's line in flat arrays for the candidate search: vertices of segment i are
 * `start[i]` … `start[i + 1] − 1`, interleaved lon/lat in `lonLat`, and `pieceM[k]` is the length of
 * the piece from vertex k to k + 1 in cheap-ruler's local metres. `id`, `lengthM` and `oneway` copy
 * the segments' fields: the candidate search and path assembly touch many segments per fix, and
 * reading them from the segment objects was a cache miss each (half of the search's time).
 */
export interface SegmentLines {
  start: Int32Array;
  lonLat: Float64Array;
  pieceM: Float64Array;
  /** Sum of the segment's `pieceM`, in order. */
  lineM: Float64Array;
  id: Float64Array;
  lengthM: Float64Array;
  oneway: Uint8Array;
}

const linesOfNetwork = new WeakMap<Network, SegmentLines>();

function segmentLines(network: Network): SegmentLines {
  let lines = linesOfNetwork.get(network);
  if (lines) return lines;
  const { segments } = network;
  const { kx, ky } = network.ruler;
  const start = new Int32Array(segments.length + 1);
  segments.forEach((s, i) => (start[i + 1] = start[i] + s.coords.length));
  const lonLat = new Float64Array(2 * start[segments.length]);
  const pieceM = new Float64Array(start[segments.length]);
  segments.forEach((s, i) => {
    s.coords.forEach(([lon, lat], v) => {
      const k = start[i] + v;
      lonLat[2 * k] = lon;
      lonLat[2 * k + 1] = lat;
      if (v + 1 < s.coords.length) {
        const dx = (s.coords[v + 1][0] - lon) * kx;
        const dy = (s.coords[v + 1][1] - lat) * ky;
        pieceM[k] = Math.sqrt(dx * dx + dy * dy);
      }
    });
  });
  const lineM = new Float64Array(segments.length);
  for (let i = 0; i < segments.length; i++) {
    for (let k = start[i]; k < start[i + 1] - 1; k++) lineM[i] += pieceM[k];
  }
  const id = Float64Array.from(segments, (s) => s.id);
  const lengthM = Float64Array.from(segments, (s) => s.lengthM);
  const oneway = Uint8Array.from(segments, (s) => (s.oneway ? 1 : 0));
  linesOfNetwork.set(network, (lines = { start, lonLat, pieceM, lineM, id, lengthM, oneway }));
  return lines;
}

/**
 * Route balls: a first search from a node covers 500 m (half the transitions at 30 s sampling need less;
 * a ball doubles when a query needs more); legs beyond 4 km are searched live. 4 M hash slots of 16 bytes ≈ 64 MB per context at most.
 */
const ROUTE_BALLS = { minRadius: 500, growth: 2, maxRadius: 4000, maxEntries: 4_000_000 };

/**
 * Route balls precomputed when a network is prepared for matching (`prepareMatching`): every node to
 * RADIUS cost metres, within SLOTS hash slots of 16 bytes (64 MB; Monaco's 4,124 nodes take ~1.7 M).
 */
const BALL_TABLE = { radius: 2000, maxSlots: 4_000_000 };

const contexts = new WeakMap<Network, Map<string, MatchContext>>();

function contextsOf(network: Network): Map<string, MatchContext> {
  let byMode = contexts.get(network);
  if (!byMode) contexts.set(network, (byMode = new Map()));
  return byMode;
}

export function matchContextOf(network: Network, mode: AccessMode, slowRoadPenalty = 0): MatchContext {
  const byMode = contextsOf(network);
  const key = `${mode}:${slowRoadPenalty}`;
  let ctx = byMode.get(key);
  if (!ctx) byMode.set(key, (ctx = buildContext(network, mode, slowRoadPenalty)));
  return ctx;
}

/**
 * Readies a network for matching cars with the default options, the context nearly every trip uses:
 * its route balls precomputed (or `table`, built by another thread on the same network), so the first
 * trips match at nearly steady speed. Returns the table, whose shared memory worker threads can adopt.
 */
export function prepareMatching(network: Network, table?: BallTable): BallTable {
  const penalty = DEFAULT_MATCH_OPTIONS.slowRoadPenalty;
  const key = `car:${penalty}`;
  const ready = contextsOf(network).get(key)?.routes.table;
  if (ready) return ready;
  const ctx = buildContext(network, "car", penalty, table ?? "build");
  contextsOf(network).set(key, ctx);
  return ctx.routes.table!;
}

/** Speed at and above which a road carries no prior penalty (an urban main road's limit). */
const PRIOR_FULL_SPEED_KPH = 50;

function buildContext(
  network: Network,
  mode: AccessMode,
  slowRoadPenalty: number,
  table?: BallTable | "build",
): MatchContext {
  const edgeCostM = new Float64Array(network.segments.length * 2);
  network.segments.forEach((s, i) => {
    // Road-speed prior (cars only): a route through slow side streets is taken as that much longer, so
    // among routes that fit the fixes about equally the one along the main road wins.
    const slowness =
      mode === "car" ? Math.max(0, PRIOR_FULL_SPEED_KPH - s.speedKph) / PRIOR_FULL_SPEED_KPH : 0;
    const cost = network.allows(s, mode) ? s.lengthM * (1 + slowRoadPenalty * slowness) : Infinity;
    edgeCostM[2 * i] = cost;
    edgeCostM[2 * i + 1] = s.oneway ? Infinity : cost;
  });
  const workspace = new DijkstraWorkspace(network);
  workspace.prepareWeights(edgeCostM);
  const balls =
    table === "build"
      ? buildBallTable(network, workspace, edgeCostM, BALL_TABLE.radius, BALL_TABLE.maxSlots)
      : table;
  const routes = new RouteBalls(network, workspace, edgeCostM, ROUTE_BALLS, balls);
  const allowed = Uint8Array.from(network.segments, (s) => (network.allows(s, mode) ? 1 : 0));
  return new MatchContext(network, mode, edgeCostM, workspace, routes, segmentLines(network), allowed);
}
