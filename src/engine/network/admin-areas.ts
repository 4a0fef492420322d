import osmtogeojson from "osmtogeojson";
import { openOsmReader, type OsmRelation, type OsmWay } from "./osm-reader.js";

/** A boundary polygon of the extract: an administrative area (by level) or a postal-code area. */
export interface AdminArea {
  /** OSM relation id. */
  osmId: number;
  kind: "administrative" | "postal_code";
  /** `admin_level` of an administrative area; null for postal codes. */
  adminLevel: number | null;
  name: string | null;
  /** `postal_code` (or `ref` of a postal-code boundary), when tagged. */
  postalCode: string | null;
  geometry: { type: "Polygon" | "MultiPolygon"; coordinates: unknown };
}

/** A member way of a boundary: only its nodes matter. */
interface BoundaryWay {
  id: number;
  refs: number[];
}

interface BoundaryNode {
  type: "node";
  id: number;
  lon: number;
  lat: number;
}

const ADMIN_LEVEL = /^\d{1,2}$/;

/**
 * Collects the administrative (`boundary=administrative` with an `admin_level`) and postal-code
 * (`boundary=postal_code`) relations of an OSM file as polygons, over three streaming passes that it
 * shares with the road network's (osm-import.ts): the relations, then their member ways, then those
 * ways' nodes, so memory holds only the boundaries. A boundary cut by the extract's edge (a member way
 * or node missing, or an outline left open) is left out: a partial ring would claim trips that are not in it.
 */
export class AdminAreaCollector {
  private readonly relations: OsmRelation[] = [];
  private readonly memberWays = new Set<number>();
  private readonly ways: BoundaryWay[] = [];
  private readonly memberNodes = new Set<number>();
  private readonly nodes: BoundaryNode[] = [];

  /** Pass 1: the boundary relations. */
  onRelation(relation: OsmRelation): void {
    if (!isBoundary(relation.tags)) return;
    this.relations.push(relation);
    for (const id of relation.wayIds) this.memberWays.add(id);
  }

  /** Whether pass 2 (member ways) is needed. */
  get wantsWays(): boolean {
    return this.memberWays.size > 0;
  }

  /** Pass 2: the member ways' node lists. */
  onWay(way: OsmWay): void {
    if (!this.memberWays.has(way.id)) return;
    this.ways.push({ id: way.id, refs: way.refs });
    for (const ref of way.refs) this.memberNodes.add(ref);
  }

  /** Pass 3: those ways' nodes. */
  onNode(id: number, lon: number, lat: number): void {
    if (this.memberNodes.has(id)) this.nodes.push({ type: "node", id, lon, lat });
  }

  areas(): AdminArea[] {
    if (this.relations.length === 0) return [];
    const complete = completeRelations(this.relations, this.ways, this.nodes);
    return polygonsOf(complete, this.ways, this.nodes);
  }
}

/** The boundaries of an OSM file alone (the network import reads them with the roads: osm-import.ts). */
export async function readAdminAreas(file: string): Promise<AdminArea[]> {
  const reader = await openOsmReader(file);
  const collector = new AdminAreaCollector();
  await reader.read({ onRelation: (r) => collector.onRelation(r) });
  if (collector.wantsWays) await reader.read({ onWay: (w) => collector.onWay(w) });
  if (collector.wantsWays) await reader.read({ onNode: (id, lon, lat) => collector.onNode(id, lon, lat) });
  return collector.areas();
}

function isBoundary(tags: Record<string, string>): boolean {
  if (tags.boundary === "administrative") return ADMIN_LEVEL.test(tags.admin_level ?? "");
  return tags.boundary === "postal_code";
}

/** Relations whose every member way, and every node of those ways, is in the file. */
function completeRelations(
  relations: OsmRelation[],
  ways: BoundaryWay[],
  nodes: BoundaryNode[],
): OsmRelation[] {
  const located = new Set(nodes.map((n) => n.id));
  const wholeWays = new Set(ways.filter((w) => w.refs.every((ref) => located.has(ref))).map((w) => w.id));
  return relations.filter((r) =>
    r.members.every((m) => m.type !== "way" || m.role === "subarea" || wholeWays.has(m.ref)),
  );
}

function polygonsOf(relations: OsmRelation[], ways: BoundaryWay[], nodes: BoundaryNode[]): AdminArea[] {
  // Only ring members: labels, admin centres and subareas are not part of the outline.
  const rings = relations.map((r) => ({
    type: "relation",
    ...r,
    members: r.members.filter(
      (m) => m.type === "way" && (m.role === "outer" || m.role === "inner" || m.role === ""),
    ),
  }));
  // OSM JSON names a way's node list `nodes`.
  const wayElements = ways.map((w) => ({ type: "way", id: w.id, nodes: w.refs }));
  const geojson = osmtogeojson({ elements: [...nodes, ...wayElements, ...rings] }, { flatProperties: true });
  const byId = new Map(relations.map((r) => [r.id, r]));
  const areas: AdminArea[] = [];
  for (const feature of geojson.features) {
    const match = /^relation\/(\d+)$/.exec(feature.id);
    if (!match || feature.properties.tainted) continue;
    const { type } = feature.geometry;
    if (type !== "Polygon" && type !== "MultiPolygon") continue;
    const relation = byId.get(Number(match[1]))!;
    if (!allRingsClosed(type, feature.geometry.coordinates)) continue;
    areas.push(areaOf(relation, { type, coordinates: feature.geometry.coordinates }));
  }
  return areas.sort((a, b) => a.osmId - b.osmId);
}

/**
 * Extracts often keep a relation but list only the member ways inside the cut, so its outline
 * is an open line: such a boundary runs past the extract's edge.
 */
function allRingsClosed(type: "Polygon" | "MultiPolygon", coordinates: unknown): boolean {
  const polygons = (type === "Polygon" ? [coordinates] : coordinates) as number[][][][];
  return polygons.every((rings) =>
    rings.every((ring) => {
      const [first, last] = [ring[0], ring[ring.length - 1]];
      return ring.length >= 4 && first[0] === last[0] && first[1] === last[1];
    }),
  );
}

function areaOf(relation: OsmRelation, geometry: AdminArea["geometry"]): AdminArea {
  const tags = relation.tags;
  const administrative = tags.boundary === "administrative";
  return {
    osmId: relation.id,
    kind: administrative ? "administrative" : "postal_code",
    adminLevel: administrative ? Number(tags.admin_level) : null,
    name: tags.name ?? null,
    postalCode: tags.postal_code ?? (administrative ? null : (tags.ref ?? null)),
    geometry,
  };
}
