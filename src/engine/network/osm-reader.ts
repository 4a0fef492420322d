import { open } from "node:fs/promises";
import { EngineError } from "../errors.js";
import type { Tags } from "./osm-tags.js";
import { PbfReader } from "./osm-pbf.js";
import { XmlReader } from "./osm-xml.js";

export interface OsmWay {
  id: number;
  refs: number[];
  tags: Tags;
}

export interface OsmMember {
  type: "node" | "way" | "relation";
  ref: number;
  role: string;
}

export interface OsmRelation {
  id: number;
  /** Ids of the way members, in the relation's order. */
  wayIds: number[];
  members: OsmMember[];
  tags: Tags;
}

/** What one streaming pass over the file hands out; an element kind without a handler is skipped. */
export interface OsmPass {
  onNode?: (id: number, lon: number, lat: number) => void;
  onWay?: (way: OsmWay) => void;
  /** Whether ways need their tags (decoding them costs); without, `tags` is empty. */
  wayTags?: boolean;
  onRelation?: (relation: OsmRelation) => void;
}

/**
 * One OSM file read in streaming passes. Files list nodes, then ways, then relations, so a reader learns
 * which ways and nodes matter only on a later pass: ways (and relations) first, then node coordinates.
 */
export interface OsmReader {
  read(pass: OsmPass): Promise<void>;
}

const GZIP_MAGIC = [0x1f, 0x8b];

export function relationOf(id: number, members: OsmMember[], tags: Tags): OsmRelation {
  return { id, wayIds: members.filter((m) => m.type === "way").map((m) => m.ref), members, tags };
}

/** PBF by extension; `.osm`, `.xml` and their `.gz` as XML (gzip recognised by its magic bytes). */
export async function openOsmReader(file: string): Promise<OsmReader> {
  const lower = file.toLowerCase();
  if (lower.endsWith(".pbf")) return new PbfReader(file);
  if (/\.(osm|xml)(\.gz)?$/.test(lower)) return new XmlReader(file, await isGzip(file));
  throw new EngineError("unsupported_osm_file", "expected .osm.pbf, .osm or .osm.gz", file);
}

async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === GZIP_MAGIC[0] && buffer[1] === GZIP_MAGIC[1];
  } finally {
    await handle.close();
  }
}
