import CheapRuler from "cheap-ruler";
import {
  accessOf,
  nameOf,
  onewayOf,
  roadClassOf,
  roadTypeOf,
  speedOf,
  type Oneway,
  type Tags,
} from "./osm-tags.js";
import { segmentIdOf, type LonLat, type Segment } from "./types.js";

/**
 * The nodes routable ways use: how often each is used (≥ 2 makes a junction)
 * and, after the node pass, where it lies. Slots keep coordinates in typed arrays.
 */
export class NodeTable {
  private readonly slots = new Map<number, number>();
  private readonly uses: number[] = [];
  private lon = new Float64Array(0);
  private lat = new Float64Array(0);
  private located = 0;

  get size(): number {
    return this.slots.size;
  }

  get locatedCount(): number {
    return this.located;
  }

  use(id: number): void {
    const slot = this.slots.get(id);
    if (slot === undefined) {
      this.slots.set(id, this.uses.length);
      this.uses.push(1);
    } else this.uses[slot]++;
  }

  /** Call once every way was counted, before `locate`. */
  allocateCoordinates(): void {
    this.lon = new Float64Array(this.size).fill(NaN);
    this.lat = new Float64Array(this.size).fill(NaN);
  }

  /** Records a node's position if a routable way needs it. */
  locate(id: number, lon: number, lat: number): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    if (Number.isNaN(this.lon[slot])) this.located++;
    this.lon[slot] = lon;
    this.lat[slot] = lat;
  }

  isJunction(id: number): boolean {
    return this.uses[this.slots.get(id)!] >= 2;
  }

  /** Position, or null for a node the file lacks (ways clipped at an extract's edge). */
  position(id: number): LonLat | null {
    const slot = this.slots.get(id);
    if (slot === undefined || Number.isNaN(this.lon[slot])) return null;
    return [this.lon[slot], this.lat[slot]];
  }
}

/**
 * Distinct OSM nodes can share a position; their piece keeps the junction link
 * but gets this token length so every segment has a positive length.
 */
const MIN_LENGTH_M = 0.01;

/** A way kept by the first pass, consecutive duplicate node refs already dropped. */
export interface RoutableWay {
  id: number;
  refs: number[];
  tags: Tags;
}

export function withoutRepeatedRefs(refs: number[]): number[] {
  return refs.filter((ref, i) => i === 0 || ref !== refs[i - 1]);
}

/** Pieces of one way: split at junctions and wherever nodes are missing from the file. */
interface Piece {
  refs: number[];
  coords: LonLat[];
}

function piecesOf(way: RoutableWay, nodes: NodeTable): Piece[] {
  const pieces: Piece[] = [];
  let current: Piece = { refs: [], coords: [] };
  const close = () => {
    if (current.refs.length >= 2) pieces.push(current);
    current = { refs: [], coords: [] };
  };
  way.refs.forEach((ref, i) => {
    const position = nodes.position(ref);
    if (position === null) return close();
    current.refs.push(ref);
    current.coords.push(position);
    const interior = i > 0 && i < way.refs.length - 1;
    if (interior && current.refs.length >= 2 && nodes.isJunction(ref)) {
      close();
      current.refs.push(ref);
      current.coords.push(position);
    }
  });
  close();
  return pieces;
}

/** Every routable way cut into segments, sorted by id. */
export function splitWays(ways: Iterable<RoutableWay>, nodes: NodeTable): Segment[] {
  const segments: Segment[] = [];
  for (const way of ways) {
    const pieces = piecesOf(way, nodes);
    if (pieces.length === 0) continue;
    const attributes = wayAttributes(way.tags);
    const ruler = new CheapRuler(pieces[0].coords[0][1], "meters");
    pieces.forEach((piece, index) => segments.push(segmentOf(way, index, piece, attributes, ruler)));
  }
  return segments.sort((a, b) => a.id - b.id);
}

type WayAttributes = Pick<
  Segment,
  "roadClass" | "highway" | "roadType" | "speedKph" | "name" | "access" | "oneway"
> & { direction: Oneway };

function wayAttributes(tags: Tags): WayAttributes {
  const direction = onewayOf(tags);
  return {
    roadClass: roadClassOf(tags.highway),
    highway: tags.highway,
    roadType: roadTypeOf(tags.highway),
    speedKph: speedOf(tags),
    name: nameOf(tags),
    access: accessOf(tags),
    oneway: direction !== "both",
    direction,
  };
}

/** Pieces of oneway=-1 ways are stored reversed so `oneway` always means "along the geometry". */
function segmentOf(
  way: RoutableWay,
  index: number,
  piece: Piece,
  { direction, ...attributes }: WayAttributes,
  ruler: CheapRuler,
): Segment {
  const reversed = direction === "reverse";
  const coords = reversed ? piece.coords.reverse() : piece.coords;
  const refs = reversed ? piece.refs.reverse() : piece.refs;
  return {
    id: segmentIdOf(way.id, index),
    wayId: way.id,
    index,
    ...attributes,
    lengthM: Math.max(ruler.lineDistance(coords), MIN_LENGTH_M),
    fromNode: refs[0],
    toNode: refs[refs.length - 1],
    coords,
  };
}
