import type { OsmRelation, OsmWay } from "./osm-reader.js";
import type { NodeTable } from "./split-ways.js";
import { withoutRepeatedRefs } from "./split-ways.js";
import type { LonLat, TransitRoute } from "./types.js";

/** `railway` values imported as rail lines. */
export const RAIL_SERVICES = new Set(["rail", "light_rail", "subway", "tram"]);

/** Way roles of a route relation that are not travelled: stops and platforms are places beside the line. */
const NOT_TRAVELLED = /^(stop|platform)/;

export function isRailLine(tags: OsmWay["tags"]): boolean {
  return RAIL_SERVICES.has(tags.railway ?? "") && tags.area !== "yes";
}

export function isBusRoute(tags: OsmRelation["tags"]): boolean {
  return tags.type === "route" && tags.route === "bus";
}

/**
 * Collects the transit layer during the ways pass: rail ways (their nodes counted in a table
 * of their own, so level crossings do not split roads) and bus route relations.
 */
export class TransitCollector {
  private readonly railWays: { id: number; refs: number[]; tags: OsmWay["tags"] }[] = [];
  private readonly busRoutes: TransitRoute[] = [];

  constructor(private readonly railNodes: NodeTable) {}

  onWay(way: OsmWay): void {
    if (!isRailLine(way.tags)) return;
    const refs = withoutRepeatedRefs(way.refs);
    if (refs.length < 2) return;
    for (const ref of refs) this.railNodes.use(ref);
    this.railWays.push({ id: way.id, refs, tags: way.tags });
  }

  onRelation(relation: OsmRelation): void {
    if (!isBusRoute(relation.tags)) return;
    const wayIds = relation.members
      .filter((m) => m.type === "way" && !NOT_TRAVELLED.test(m.role))
      .map((m) => m.ref);
    if (wayIds.length === 0) return;
    this.busRoutes.push({
      kind: "bus",
      osmId: relation.id,
      service: "bus",
      name: relation.tags.name ?? null,
      ref: relation.tags.ref ?? null,
      wayIds,
      coords: [],
    });
  }

  get railCount(): number {
    return this.railWays.length;
  }

  get busCount(): number {
    return this.busRoutes.length;
  }

  /** After the node pass: rail lines with their located vertices (a line clipped to < 2 vertices is dropped). */
  routes(): TransitRoute[] {
    const rail: TransitRoute[] = [];
    for (const way of this.railWays) {
      const coords = way.refs.map((r) => this.railNodes.position(r)).filter((p): p is LonLat => p !== null);
      if (coords.length < 2) continue;
      rail.push({
        kind: "rail",
        osmId: way.id,
        service: way.tags.railway,
        name: way.tags.name ?? null,
        ref: way.tags.ref ?? null,
        wayIds: [way.id],
        coords,
      });
    }
    return [...rail.sort((a, b) => a.osmId - b.osmId), ...this.busRoutes.sort((a, b) => a.osmId - b.osmId)];
  }
}
