import { fileURLToPath } from "node:url";

/** The OSM extract the repository ships (data/osm, see its SOURCE.md): Monaco, the demo's network. */
export const MONACO_PBF = fileURLToPath(new URL("../../data/osm/monaco.osm.pbf", import.meta.url));
