import { EngineError } from "../errors.js";
import { AdminAreaCollector, type AdminArea } from "./admin-areas.js";
import { openOsmReader, type OsmReader } from "./osm-reader.js";
import { isRoutableWay } from "./osm-tags.js";
import { NodeTable, splitWays, withoutRepeatedRefs, type RoutableWay } from "./split-ways.js";
import { TransitCollector } from "./transit-layer.js";
import type { Segment, TransitRoute } from "./types.js";

export interface OsmReadOptions {
  onProgress?: (line: string) => void;
  /** Read the boundaries too (default); without, `areas` is empty and no pass is spent on them. */
  boundaries?: boolean;
}

const PROGRESS_EVERY_WAYS = 100_000;

/** An OSM file's road network and, as separate layers, its rail lines and bus routes and its boundaries. */
export interface OsmNetwork {
  segments: Segment[];
  transit: TransitRoute[];
  /** Administrative and postal-code boundaries (the preset geographies). */
  areas: AdminArea[];
}

/** The routable road network of an OSM file as segments sorted by id (see readOsmNetwork). */
export async function readOsmSegments(file: string, opts: OsmReadOptions = {}): Promise<Segment[]> {
  return (await readOsmNetwork(file, { ...opts, boundaries: false })).segments;
}

/**
 * Reads the routable road network of an OSM file (.osm.pbf, .osm, .osm.gz) as segments sorted by id,
 * its transit layer and its boundaries. Streaming passes keep memory to what they need: ways, relations
 * and node use counts first; then the boundaries' member ways (only when there are boundaries); then
 * the coordinates of the nodes that matter, for all three at once.
 */
export async function readOsmNetwork(file: string, opts: OsmReadOptions = {}): Promise<OsmNetwork> {
  const log = opts.onProgress ?? (() => {});
  const reader = await openOsmReader(file);
  const nodes = new NodeTable();
  const railNodes = new NodeTable();
  const transit = new TransitCollector(railNodes);
  const boundaries = opts.boundaries === false ? undefined : new AdminAreaCollector();

  log(`pass 1: reading routable ways, rail lines, bus routes and boundaries of ${file}`);
  const ways = await unreadableAsBadFile(file, collectWays(reader, nodes, transit, boundaries, log));
  log(
    `pass 1 done: ${ways.length} routable ways using ${nodes.size} nodes; ` +
      `${transit.railCount} rail ways, ${transit.busCount} bus routes`,
  );
  if (boundaries?.wantsWays) {
    log("pass 2: reading the boundaries' ways");
    await unreadableAsBadFile(file, reader.read({ onWay: (way) => boundaries.onWay(way) }));
  }

  nodes.allocateCoordinates();
  railNodes.allocateCoordinates();
  log("last pass: reading node coordinates");
  await unreadableAsBadFile(
    file,
    reader.read({
      onNode: (id, lon, lat) => {
        nodes.locate(id, lon, lat);
        railNodes.locate(id, lon, lat);
        boundaries?.onNode(id, lon, lat);
      },
    }),
  );
  log(`located ${nodes.locatedCount} of ${nodes.size} road nodes`);

  const segments = splitWays(ways, nodes);
  log(`split ${ways.length} ways into ${segments.length} segments`);
  return { segments, transit: transit.routes(), areas: boundaries?.areas() ?? [] };
}

/**
 * Pass 1: keeps routable ways and counts each node's uses; hands rail ways and relations to the transit
 * layer and relations to the boundaries.
 */
async function collectWays(
  reader: OsmReader,
  nodes: NodeTable,
  transit: TransitCollector,
  boundaries: AdminAreaCollector | undefined,
  log: (line: string) => void,
): Promise<RoutableWay[]> {
  const ways: RoutableWay[] = [];
  await reader.read({
    wayTags: true,
    onWay: (way) => {
      transit.onWay(way);
      if (!isRoutableWay(way.tags)) return;
      const refs = withoutRepeatedRefs(way.refs);
      if (refs.length < 2) return;
      for (const ref of refs) nodes.use(ref);
      ways.push({ id: way.id, refs, tags: way.tags });
      if (ways.length % PROGRESS_EVERY_WAYS === 0) log(`  ${ways.length} routable ways...`);
    },
    onRelation: (relation) => {
      transit.onRelation(relation);
      boundaries?.onRelation(relation);
    },
  });
  return ways;
}

/** Parser failures (truncated PBF, malformed XML) are the operator's file problem: one clear line, no stack. */
async function unreadableAsBadFile<T>(file: string, pass: Promise<T>): Promise<T> {
  try {
    return await pass;
  } catch (err) {
    throw new EngineError("invalid_osm_file", (err as Error).message, file);
  }
}
