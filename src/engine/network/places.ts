import type { Network } from "./network.js";
import { ROAD_CLASSES, type LonLat, type Segment } from "./types.js";

/**
 * Named roads of a network, searchable by name: the offline stand-in for a geocoder. Segments with the same
 * (normalized) name form one place per stretch of road; the same name in two towns gives two places.
 */

/** Segments of one name whose midpoints lie within about this distance belong to the same place. */
export const PLACE_CLUSTER_M = 500;

export interface Place {
  /** The most frequent spelling among the place's segments. */
  name: string;
  /** A point on the road near the middle of the place (on the segment closest to the box centre). */
  point: LonLat;
  bbox: [west: number, south: number, east: number, north: number];
  segmentCount: number;
  lengthM: number;
  /** The most important road class among its segments. */
  roadClass: string;
}

export interface PlaceSearchResult {
  places: Place[];
  /** Places matching the query, before `limit` cut the list. */
  total: number;
}

/** How a name matches a query; lower is better. */
export const MatchRank = { Exact: 0, NameStart: 1, WordStart: 2, AllWordStarts: 3, Inside: 4 } as const;
export type MatchRank = (typeof MatchRank)[keyof typeof MatchRank];

/** Lowercase, without diacritics, punctuation as spaces: "Boulevard d'Italie" → "boulevard d italie". */
export function normalizeName(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** How `name` (normalized) matches `query` (normalized), or null when it does not. */
export function matchRank(name: string, query: string): MatchRank | null {
  if (query === "") return null;
  if (name === query) return MatchRank.Exact;
  if (name.startsWith(query)) return MatchRank.NameStart;
  if (name.includes(` ${query}`)) return MatchRank.WordStart;
  const words = name.split(" ");
  const tokens = query.split(" ");
  if (tokens.length > 1 && tokens.every((t) => words.some((w) => w.startsWith(t))))
    return MatchRank.AllWordStarts;
  if (name.includes(query)) return MatchRank.Inside;
  return null;
}

interface PlaceEntry {
  segments: number[];
  bbox: Place["bbox"];
  lengthM: number;
  classRank: number;
  spellings: Map<string, number>;
}

/** Normalized name → its places. */
type PlaceIndex = Map<string, PlaceEntry[]>;

const indexes = new WeakMap<Network, PlaceIndex>();
const classRank = new Map<string, number>(ROAD_CLASSES.map((c, i) => [c, i]));

/**
 * Places whose name matches `query`: exact names first, then names starting with it, names with a word
 * starting with it, names with every query word as a word start, and names containing it; within a rank,
 * main roads before minor ones, then longer before shorter, then by name.
 */
export function searchPlaces(network: Network, query: string, limit: number): PlaceSearchResult {
  const q = normalizeName(query);
  const found: { rank: MatchRank; entry: PlaceEntry; name: string }[] = [];
  for (const [name, entries] of placeIndexOf(network)) {
    const rank = matchRank(name, q);
    if (rank === null) continue;
    for (const entry of entries) found.push({ rank, entry, name: displayName(entry) });
  }
  found.sort(
    (a, b) =>
      a.rank - b.rank ||
      a.entry.classRank - b.entry.classRank ||
      b.entry.lengthM - a.entry.lengthM ||
      a.name.localeCompare(b.name) ||
      a.entry.bbox[0] - b.entry.bbox[0] ||
      a.entry.bbox[1] - b.entry.bbox[1],
  );
  return {
    places: found.slice(0, limit).map(({ entry, name }) => placeOf(network, entry, name)),
    total: found.length,
  };
}

/** Built on the first search of a network and kept as long as the network is. */
function placeIndexOf(network: Network): PlaceIndex {
  let index = indexes.get(network);
  if (!index) {
    index = buildPlaceIndex(network);
    indexes.set(network, index);
  }
  return index;
}

function buildPlaceIndex(network: Network): PlaceIndex {
  const byName = new Map<string, number[]>();
  network.segments.forEach((s, i) => {
    if (!s.name) return;
    const key = normalizeName(s.name);
    if (key === "") return;
    const list = byName.get(key);
    if (list) list.push(i);
    else byName.set(key, [i]);
  });
  const index: PlaceIndex = new Map();
  for (const [name, segments] of byName)
    index.set(
      name,
      clusterSegments(network, segments).map((members) => entryOf(network.segments, members)),
    );
  return index;
}

/**
 * Splits one name's segments into places: segments sharing a junction, or with midpoints in the same or
 * neighbouring grid cells of PLACE_CLUSTER_M, join (union-find), so both carriageways of an avenue stay one
 * place while a namesake street in the next town is another.
 */
function clusterSegments(network: Network, members: number[]): number[][] {
  const parent = members.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const union = (a: number, b: number) => {
    parent[find(a)] = find(b);
  };
  const byNode = new Map<number, number>();
  const byCell = new Map<string, number>();
  const { kx, ky } = network.ruler;
  members.forEach((segmentIndex, i) => {
    const s = network.segments[segmentIndex];
    for (const node of [s.fromNode, s.toNode]) {
      const other = byNode.get(node);
      if (other === undefined) byNode.set(node, i);
      else union(i, other);
    }
    const [lon, lat] = s.coords[Math.floor(s.coords.length / 2)];
    const cx = Math.floor((lon * kx) / PLACE_CLUSTER_M);
    const cy = Math.floor((lat * ky) / PLACE_CLUSTER_M);
    for (let dx = -1; dx <= 1; dx++)
      for (let dy = -1; dy <= 1; dy++) {
        const other = byCell.get(`${cx + dx}:${cy + dy}`);
        if (other !== undefined) union(i, other);
      }
    if (!byCell.has(`${cx}:${cy}`)) byCell.set(`${cx}:${cy}`, i);
  });
  const groups = new Map<number, number[]>();
  members.forEach((segmentIndex, i) => {
    const root = find(i);
    const group = groups.get(root);
    if (group) group.push(segmentIndex);
    else groups.set(root, [segmentIndex]);
  });
  return [...groups.values()];
}

function entryOf(segments: Segment[], members: number[]): PlaceEntry {
  const bbox: Place["bbox"] = [Infinity, Infinity, -Infinity, -Infinity];
  const spellings = new Map<string, number>();
  let lengthM = 0;
  let rank = Infinity;
  for (const i of members) {
    const s = segments[i];
    for (const [x, y] of s.coords) {
      bbox[0] = Math.min(bbox[0], x);
      bbox[1] = Math.min(bbox[1], y);
      bbox[2] = Math.max(bbox[2], x);
      bbox[3] = Math.max(bbox[3], y);
    }
    lengthM += s.lengthM;
    rank = Math.min(rank, classRank.get(s.roadClass) ?? ROAD_CLASSES.length);
    spellings.set(s.name!, (spellings.get(s.name!) ?? 0) + 1);
  }
  return { segments: members, bbox, lengthM, classRank: rank, spellings };
}

/** The most frequent spelling; ties go to the alphabetically first, so answers are stable. */
function displayName(entry: PlaceEntry): string {
  let best = "";
  let bestCount = 0;
  for (const [name, count] of entry.spellings)
    if (count > bestCount || (count === bestCount && name < best)) [best, bestCount] = [name, count];
  return best;
}

function placeOf(network: Network, entry: PlaceEntry, name: string): Place {
  const centre: LonLat = [(entry.bbox[0] + entry.bbox[2]) / 2, (entry.bbox[1] + entry.bbox[3]) / 2];
  let point: LonLat = centre;
  let best = Infinity;
  for (const i of entry.segments) {
    const s = network.segments[i];
    const middle = network.ruler.along(s.coords, network.ruler.lineDistance(s.coords) / 2);
    const distance = network.ruler.distance(middle, centre);
    if (distance < best) [point, best] = [middle, distance];
  }
  return {
    name,
    point: [round6(point[0]), round6(point[1])],
    bbox: entry.bbox.map(round6) as Place["bbox"],
    segmentCount: entry.segments.length,
    lengthM: Math.round(entry.lengthM),
    roadClass: ROAD_CLASSES[entry.classRank] ?? "road",
  };
}

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;
