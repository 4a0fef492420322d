import type { NetworkRegistry } from "../../engine/network/registry.js";
import { selectSegments } from "../../engine/network/select.js";
import type { Segment } from "../../engine/network/types.js";
import type { Network } from "../../engine/network/network.js";
import { fail } from "../errors.js";
import {
  parseRoadClasses,
  parseSelector,
  requireCountsMode,
  segmentFilter,
  type ClassFilterInput,
  type CountsMode,
  type GeometryInput,
} from "./selection.js";

/** The part every counts request shares: what to select, where, for which travel mode. */
export interface SelectionRequest {
  geometry: GeometryInput;
  country: string;
  mode: string;
  roadway_classification?: ClassFilterInput;
}

export interface ResolvedSelection {
  country: string;
  mode: CountsMode;
  segments: Segment[];
}

/** Validates the request (400s first), then finds the country's network (404) and selects. */
export async function resolveSelection(
  networks: NetworkRegistry,
  request: SelectionRequest,
): Promise<ResolvedSelection> {
  const selector = parseSelector(request.geometry);
  const mode = requireCountsMode(request.mode);
  const classes = parseRoadClasses(request.roadway_classification);
  const country = request.country.trim().toLowerCase();
  const network = await networks.get(country);
  if (!network) throw fail("unknown_country", { country: request.country }, "country");
  // What the selection depends on, as text (the class Set as its sorted names).
  const key = JSON.stringify([selector, mode.access, classes && [...classes].sort()]);
  const cached = recentSelections.get(network)?.get(key);
  if (cached) {
    remember(network, key, cached); // most recently used
    return { country, mode, segments: cached };
  }
  const selection = selectSegments(
    network,
    selector,
    segmentFilter(mode, classes, (s, a) => network.allows(s, a)),
  );
  if (selection.unknownIds.length > 0)
    throw fail(
      "unknown_segment_ids",
      {
        ids: `${selection.unknownIds.slice(0, 50).join(", ")}${selection.unknownIds.length > 50 ? ", …" : ""}`,
      },
      "geometry.segment_ids",
    );
  remember(network, key, selection.segments);
  return { country, mode, segments: selection.segments };
}

/**
 * The last selections per network (LRU): clients page through areas and repeat the same area for
 * other months and fields, and at 1,000 segments selecting costs about as much as reading the counts.
 * Keyed by the network object, so a re-imported network starts afresh; a long key (a detailed polygon)
 * is not kept.
 */
const recentSelections = new WeakMap<Network, Map<string, Segment[]>>();
const KEPT_SELECTIONS = 32;
const MAX_KEY_CHARS = 20_000;

function remember(network: Network, key: string, segments: Segment[]): void {
  if (key.length > MAX_KEY_CHARS) return;
  let kept = recentSelections.get(network);
  if (!kept) recentSelections.set(network, (kept = new Map()));
  kept.delete(key);
  kept.set(key, segments);
  if (kept.size > KEPT_SELECTIONS) kept.delete(kept.keys().next().value!);
}
