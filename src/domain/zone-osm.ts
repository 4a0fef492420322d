import type { NetworkRegistry } from "../engine/network/registry.js";
import type { LonLat, Segment } from "../engine/network/types.js";
import type { ZoneFeature } from "./records.js";
import { MAX_ZONE_NAME_LENGTH } from "./zone-properties.js";
import { truncateChars } from "./text-length.js";

export type FieldReport = (field: string, message: string) => void;

/** Ids as JSON numbers, or digit strings (some clients quote 64-bit ids). */
function parseWayId(v: unknown): number | undefined {
  const n = typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v;
  return Number.isSafeInteger(n) && (n as number) > 0 ? (n as number) : undefined;
}

/** Valid, de-duplicated way ids in request order; malformed entries are reported. */
function parseWayIds(value: unknown, maxZones: number, report: FieldReport): number[] {
  if (!Array.isArray(value) || value.length === 0) {
    report("osm_ids", "osm_ids must be a non-empty array of OSM way ids");
    return [];
  }
  const ids = new Set<number>();
  value.forEach((v, i) => {
    const id = parseWayId(v);
    if (id === undefined) report(`osm_ids[${i}]`, `${JSON.stringify(v)} is not an OSM way id (integer > 0)`);
    else ids.add(id);
  });
  if (ids.size > maxZones) report("osm_ids", `a zone set holds at most ${maxZones} zones (got ${ids.size})`);
  return [...ids];
}

/** A way's pieces joined where they share a node; a gap starts a new line. */
export function joinWayPieces(segments: Segment[]): LonLat[][] {
  const lines: LonLat[][] = [];
  let previousEnd: number | null = null;
  for (const s of segments) {
    if (lines.length > 0 && s.fromNode === previousEnd) lines[lines.length - 1].push(...s.coords.slice(1));
    else lines.push(s.coords.map(([lon, lat]) => [lon, lat] as LonLat));
    previousEnd = s.toNode;
  }
  return lines;
}

/** The way's name (else `way <id>`), suffixed with the id when an earlier zone has it already. */
function uniqueZoneName(segments: Segment[], wayId: number, taken: Set<string>): string {
  const way = (segments.find((s) => s.name)?.name ?? `way ${wayId}`).trim();
  const base = truncateChars(way, MAX_ZONE_NAME_LENGTH);
  let name = base;
  if (taken.has(name.toLowerCase())) {
    const suffix = ` (${wayId})`;
    name = truncateChars(base, MAX_ZONE_NAME_LENGTH - suffix.length) + suffix;
  }
  taken.add(name.toLowerCase());
  return name;
}

function wayZone(wayId: number, segments: Segment[], taken: Set<string>): ZoneFeature {
  const lines = joinWayPieces(segments);
  return {
    type: "Feature",
    geometry:
      lines.length === 1
        ? { type: "LineString", coordinates: lines[0] }
        : { type: "MultiLineString", coordinates: lines },
    properties: {
      name: uniqueZoneName(segments, wayId, taken),
      id: wayId,
      is_pass: 1,
      geom_type: "line",
      osm_id: wayId,
      road_type: segments[0].roadType,
    },
  };
}

/**
 * Turns the `osm_ids` form into line zones taken from the imported networks.
 * Every unknown id is reported in one issue.
 */
export async function zonesFromOsmIds(
  value: unknown,
  networks: NetworkRegistry,
  countries: readonly string[],
  maxZones: number,
  report: FieldReport,
): Promise<ZoneFeature[]> {
  const ids = parseWayIds(value, maxZones, report);
  const taken = new Set<string>();
  const zones: ZoneFeature[] = [];
  const unknown: number[] = [];
  for (const id of ids) {
    const found = await networks.findWay(id, countries);
    if (found) zones.push(wayZone(id, found.segments, taken));
    else unknown.push(id);
  }
  if (unknown.length > 0)
    report("osm_ids", `unknown OSM way ids (not in any imported network): ${unknown.join(", ")}`);
  return zones;
}
