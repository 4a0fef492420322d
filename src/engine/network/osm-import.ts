import type { Segment } from "./types.js";

export interface OsmReadOptions {
  onProgress?: (line: string) => void;
}

/** Placeholder until the OSM reader lands (issue 2, network import). */
export async function readOsmSegments(_file: string, _opts: OsmReadOptions = {}): Promise<Segment[]> {
  throw new Error("OSM import not implemented yet");
}
