import ngeohash from "ngeohash";
import type { ZoneFeature } from "./records.js";
import { fail } from "./errors.js";
import { zoneCentre } from "./zone-geometry.js";
import { MAX_ZONE_SET_NAME_LENGTH, MAX_ZONES_PER_SET, type NormalisedZoneSet } from "./zone-sets.js";
import { charCount } from "./text-length.js";

/** ~5 m cells: fine enough that the sort order follows the Z-curve closely. */
const GEOHASH_PRECISION = 9;

/**
 * Orders zones along the geohash Z-curve of their centres and cuts them into
 * as few chunks as `maxZones` allows, balanced in size (they differ by at most
 * one), so neighbouring zones share a chunk. Ties keep the input order, which
 * makes the result deterministic.
 */
export function splitByGeohash<T extends ZoneFeature>(zones: T[], maxZones: number): T[][] {
  if (!Number.isInteger(maxZones) || maxZones < 1)
    throw new RangeError("maxZones must be a positive integer");
  if (zones.length <= maxZones) return [zones];
  const keyed = zones.map((zone, index) => {
    const { lat, lon } = zoneCentre(zone.geometry);
    return { zone, index, hash: ngeohash.encode(lat, lon, GEOHASH_PRECISION) };
  });
  keyed.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : a.index - b.index));
  const chunkCount = Math.ceil(zones.length / maxZones);
  const chunks: T[][] = [];
  let start = 0;
  for (let c = 0; c < chunkCount; c++) {
    const size = Math.floor(zones.length / chunkCount) + (c < zones.length % chunkCount ? 1 : 0);
    chunks.push(keyed.slice(start, start + size).map((k) => k.zone));
    start += size;
  }
  return chunks;
}

/**
 * The zone sets to create for one uploaded file: the set itself when it fits,
 * else geohash-grouped parts named `NAME_1`, `NAME_2`, …
 */
export function planZoneUpload(set: NormalisedZoneSet, maxZones = MAX_ZONES_PER_SET): NormalisedZoneSet[] {
  if (!Number.isInteger(maxZones) || maxZones < 1 || maxZones > MAX_ZONES_PER_SET)
    throw fail("invalid_max_zones", { max: MAX_ZONES_PER_SET }, "max_zones");
  const chunks = splitByGeohash(set.featureCollection.features, maxZones);
  if (chunks.length === 1) return [set];
  const base = set.name ?? "zones";
  const lastName = `${base}_${chunks.length}`;
  if (charCount(lastName) > MAX_ZONE_SET_NAME_LENGTH)
    throw fail("invalid_zone_set_name", { name: lastName, max: MAX_ZONE_SET_NAME_LENGTH }, "zone_set_name");
  return chunks.map((features, i) => ({
    ...set,
    name: `${base}_${i + 1}`,
    featureCollection: { type: "FeatureCollection", features },
  }));
}
