import { EngineError } from "../errors.js";
import { openOsmReader, type OsmReader } from "./osm-reader.js";
import { isRoutableWay } from "./osm-tags.js";
import { NodeTable, splitWays, withoutRepeatedRefs, type RoutableWay } from "./split-ways.js";
import { TransitCollector } from "./transit-layer.js";
import type { Segment, TransitRoute } from "./types.js";

export interface OsmReadOptions {
  onProgress?: (line: string) => void;
}

const PROGRESS_EVERY_WAYS = 100_000;

/** An OSM file's road network and, as a separate layer, its rail lines and bus routes. */
export interface OsmNetwork {
  segments: Segment[];
  transit: TransitRoute[];
}

/** The routable road network of an OSM file as segments sorted by id (see readOsmNetwork). */
export async function readOsmSegments(file: string, opts: OsmReadOptions = {}): Promise<Segment[]> {
  return (await readOsmNetwork(file, opts)).segments;
}

/**
 * Reads the routable road network of an OSM file (.osm.pbf, .osm, .osm.gz) as
 * segments sorted by id, and its transit layer. Two passes keep memory to what the
 * ways need: ways, relations and node use counts first, then the coordinates of those nodes only.
 */
export async function readOsmNetwork(file: string, opts: OsmReadOptions = {}): Promise<OsmNetwork> {
  const log = opts.onProgress ?? (() => {});
  const reader = await openOsmReader(file);
  const nodes = new NodeTable();
  const railNodes = new NodeTable();
  const transit = new TransitCollector(railNodes);

  log(`pass 1/2: reading routable ways, rail lines and bus routes of ${file}`);
  const ways = await unreadableAsBadFile(file, collectRoutableWays(reader, nodes, transit, log));
  log(
    `pass 1/2 done: ${ways.length} routable ways using ${nodes.size} nodes; ` +
      `${transit.railCount} rail ways, ${transit.busCount} bus routes`,
  );

  nodes.allocateCoordinates();
  railNodes.allocateCoordinates();
  log("pass 2/2: reading node coordinates");
  await unreadableAsBadFile(
    file,
    reader.readNodes((id, lon, lat) => {
      nodes.locate(id, lon, lat);
      railNodes.locate(id, lon, lat);
    }),
  );
  log(`pass 2/2 done: located ${nodes.locatedCount} of ${nodes.size} nodes`);

  const segments = splitWays(ways, nodes);
  log(`split ${ways.length} ways into ${segments.length} segments`);
  return { segments, transit: transit.routes() };
}

/** Pass 1: keeps routable ways and counts each node's uses; hands rail ways and relations to the transit layer. */
async function collectRoutableWays(
  reader: OsmReader,
  nodes: NodeTable,
  transit: TransitCollector,
  log: (line: string) => void,
): Promise<RoutableWay[]> {
  const ways: RoutableWay[] = [];
  const onRelation = (relation: Parameters<TransitCollector["onRelation"]>[0]) =>
    transit.onRelation(relation);
  await reader.readWays((way) => {
    transit.onWay(way);
    if (!isRoutableWay(way.tags)) return;
    const refs = withoutRepeatedRefs(way.refs);
    if (refs.length < 2) return;
    for (const ref of refs) nodes.use(ref);
    ways.push({ id: way.id, refs, tags: way.tags });
    if (ways.length % PROGRESS_EVERY_WAYS === 0) log(`  ${ways.length} routable ways...`);
  }, onRelation);
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
