import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import osmtogeojson from "osmtogeojson";
import { OSMTransform } from "osm-pbf-parser-node";
import { SaxesParser } from "saxes";

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

interface RelationMember {
  type: "node" | "way" | "relation";
  ref: number;
  role: string;
}

type Element =
  | { type: "node"; id: number; lon: number; lat: number }
  | { type: "way"; id: number; refs: number[]; tags: Record<string, string> }
  | { type: "relation"; id: number; members: RelationMember[]; tags: Record<string, string> };

const ADMIN_LEVEL = /^\d{1,2}$/;

/**
 * Reads the administrative (`boundary=administrative` with an `admin_level`) and postal-code
 * (`boundary=postal_code`) relations of an OSM file as polygons. Three streaming passes keep
 * memory to the boundaries: relations, then their member ways, then those ways' nodes.
 * A boundary cut by the extract's edge (a member way or node missing, or an outline left open)
 * is left out: a partial ring would claim trips that are not in it.
 */
export async function readAdminAreas(file: string): Promise<AdminArea[]> {
  const relations: Extract<Element, { type: "relation" }>[] = [];
  await eachElement(file, (el) => {
    if (el.type === "relation" && isBoundary(el.tags)) relations.push(el);
  });
  if (relations.length === 0) return [];

  const wayIds = new Set<number>();
  for (const r of relations) for (const m of r.members) if (m.type === "way") wayIds.add(m.ref);
  const ways: Extract<Element, { type: "way" }>[] = [];
  await eachElement(file, (el) => {
    if (el.type === "way" && wayIds.has(el.id)) ways.push({ ...el, tags: {} });
  });

  const nodeIds = new Set<number>();
  for (const w of ways) for (const ref of w.refs) nodeIds.add(ref);
  const nodes: Extract<Element, { type: "node" }>[] = [];
  await eachElement(file, (el) => {
    if (el.type === "node" && nodeIds.has(el.id)) nodes.push(el);
  });

  const complete = completeRelations(relations, ways, nodes);
  return polygonsOf(complete, ways, nodes);
}

function isBoundary(tags: Record<string, string>): boolean {
  if (tags.boundary === "administrative") return ADMIN_LEVEL.test(tags.admin_level ?? "");
  return tags.boundary === "postal_code";
}

/** Relations whose every member way, and every node of those ways, is in the file. */
function completeRelations(
  relations: Extract<Element, { type: "relation" }>[],
  ways: Extract<Element, { type: "way" }>[],
  nodes: Extract<Element, { type: "node" }>[],
): Extract<Element, { type: "relation" }>[] {
  const located = new Set(nodes.map((n) => n.id));
  const wholeWays = new Set(ways.filter((w) => w.refs.every((ref) => located.has(ref))).map((w) => w.id));
  return relations.filter((r) =>
    r.members.every((m) => m.type !== "way" || m.role === "subarea" || wholeWays.has(m.ref)),
  );
}

function polygonsOf(
  relations: Extract<Element, { type: "relation" }>[],
  ways: Extract<Element, { type: "way" }>[],
  nodes: Extract<Element, { type: "node" }>[],
): AdminArea[] {
  // Only ring members: labels, admin centres and subareas are not part of the outline.
  const rings = relations.map((r) => ({
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

function areaOf(
  relation: Extract<Element, { type: "relation" }>,
  geometry: AdminArea["geometry"],
): AdminArea {
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

/** Streams every node, way and relation of a .osm.pbf, .osm or .osm.gz file. */
async function eachElement(file: string, fn: (el: Element) => void): Promise<void> {
  if (file.toLowerCase().endsWith(".pbf")) await eachPbfElement(file, fn);
  else await eachXmlElement(file, fn);
}

interface PbfItem {
  type: "node" | "way" | "relation";
  id: number;
  lon: number;
  lat: number;
  refs: number[];
  members: RelationMember[];
  tags?: Record<string, string>;
}

async function eachPbfElement(file: string, fn: (el: Element) => void): Promise<void> {
  const source = createReadStream(file);
  const items = source.pipe(new OSMTransform({ withTags: { node: false, way: false, relation: true } }));
  source.on("error", (err) => items.destroy(err));
  for await (const batch of items as AsyncIterable<PbfItem[]>) {
    for (const item of batch) {
      if (item.type === "node") fn({ type: "node", id: item.id, lon: item.lon, lat: item.lat });
      else if (item.type === "way") fn({ type: "way", id: item.id, refs: item.refs, tags: {} });
      else fn({ type: "relation", id: item.id, members: item.members, tags: item.tags ?? {} });
    }
  }
}

async function eachXmlElement(file: string, fn: (el: Element) => void): Promise<void> {
  const parser = new SaxesParser<{ xmlns: false }>({ xmlns: false });
  let open: Extract<Element, { type: "way" | "relation" }> | null = null;
  parser.on("opentag", (tag) => {
    const a = tag.attributes;
    if (tag.name === "node") fn({ type: "node", id: Number(a.id), lon: Number(a.lon), lat: Number(a.lat) });
    else if (tag.name === "way") open = { type: "way", id: Number(a.id), refs: [], tags: {} };
    else if (tag.name === "relation") open = { type: "relation", id: Number(a.id), members: [], tags: {} };
    else if (open === null) return;
    else if (tag.name === "nd" && open.type === "way") open.refs.push(Number(a.ref));
    else if (tag.name === "member" && open.type === "relation")
      open.members.push({ type: a.type as RelationMember["type"], ref: Number(a.ref), role: a.role ?? "" });
    else if (tag.name === "tag") open.tags[a.k] = a.v;
  });
  parser.on("closetag", (tag) => {
    if ((tag.name === "way" || tag.name === "relation") && open) {
      fn(open);
      open = null;
    }
  });
  for await (const chunk of openText(file)) parser.write(chunk as string);
  parser.close();
}

function openText(file: string): Readable {
  const stream = createReadStream(file);
  if (!file.toLowerCase().endsWith(".gz")) return stream.setEncoding("utf8");
  const gunzip = createGunzip();
  stream.on("error", (err) => gunzip.destroy(err));
  return stream.pipe(gunzip).setEncoding("utf8");
}
