import { basename } from "node:path";
import { readOsmSegments } from "../engine/network/osm-import.js";
import type { Runtime } from "../runtime.js";

/** Reads an OSM file into segments and replaces the country's network in the store. */
export async function importNetwork(
  rt: Runtime,
  file: string,
  country: string,
  log: (line: string) => void,
): Promise<number> {
  const code = country.toLowerCase();
  const segments = await readOsmSegments(file, { onProgress: log });
  rt.store.network.replaceCountry(
    {
      country: code,
      source: basename(file),
      segmentCount: segments.length,
      importedAt: new Date().toISOString(),
    },
    segments,
  );
  rt.networks.invalidate(code);
  log(`Imported ${segments.length} road segments for "${code}"`);
  return segments.length;
}
