import type { NetworkRegistry } from "../../engine/network/registry.js";
import { selectSegments } from "../../engine/network/select.js";
import type { Segment } from "../../engine/network/types.js";
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
  return { country, mode, segments: selection.segments };
}
