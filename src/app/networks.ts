import { fail } from "../domain/errors.js";
import { timeZoneOfImport } from "../domain/network-time-zone.js";
import type { NetworkSummary } from "../domain/network-map.js";
import { MAX_RESULT_WAYS, waysIn, type OsmIdRow, type OsmIdSearch } from "../domain/osm-id-search.js";
import { NetworkRegistry } from "../engine/network/registry.js";
import { VEHICLE_CLASSES } from "../engine/trips/types.js";
import type { NetworkRepo, Store, TripStatsRepo } from "./ports/store.js";

/** Use cases over the imported road networks: their time zones, summaries and OSM-way search. */

/**
 * How long a process or thread trusts a loaded network before it reads the country's import time again:
 * a network imported by another process (or the CLI) reaches every API process, heavy-request thread and
 * worker within this time (docs/network-import.md).
 */
export const NETWORK_RECHECK_MS = 1_000;

/** The store's networks, each loaded on first use and reloaded after the country is imported again. */
export function storeNetworks(
  repo: Pick<NetworkRepo, "loadSegments" | "countries">,
  recheckMs = NETWORK_RECHECK_MS,
): NetworkRegistry {
  const stampOf = async (country: string) =>
    (await repo.countries()).find((c) => c.country === country)?.importedAt ?? null;
  return new NetworkRegistry(async (c) => await repo.loadSegments(c), { stampOf, recheckMs });
}

/**
 * The local time zone of a country's network: the one given at import, else the built-in country table
 * (UTC for countries it does not list). Day types and day parts of analyses and segment counts are cut
 * by this zone's clock.
 */
export async function networkTimeZone(store: Store, country: string): Promise<string> {
  const code = country.toLowerCase();
  return timeZoneOfImport(
    (await store.network.countries()).find((c) => c.country === code) ?? { country: code },
  );
}

/** Every imported network with its extent (built from the in-memory network, which other routes share). */
export async function networkSummaries(
  repo: NetworkRepo,
  networks: NetworkRegistry,
  tripStats: TripStatsRepo,
): Promise<NetworkSummary[]> {
  const summaries: NetworkSummary[] = [];
  for (const info of await repo.countries()) {
    const network = await networks.get(info.country);
    if (!network) continue;
    const { country, importedAt } = info;
    const timeZone = timeZoneOfImport(info);
    const last = (await tripStats.monthsWithTrips(country, VEHICLE_CLASSES)).at(-1);
    const lastTripMonth = last ? `${last.year}-${String(last.month).padStart(2, "0")}` : null;
    summaries.push({
      country,
      segmentCount: network.size,
      importedAt,
      timeZone,
      bbox: network.bbox,
      lastTripMonth,
    });
  }
  return summaries;
}

/** Every way with a segment in the geometry, over the requested (or every imported) network, sorted by id. */
export async function searchOsmIds(
  search: OsmIdSearch,
  repo: NetworkRepo,
  networks: NetworkRegistry,
): Promise<OsmIdRow[]> {
  const imported = (await repo.countries()).map((c) => c.country);
  const countries = search.countries ?? imported;
  for (const c of countries)
    if (!imported.includes(c)) throw fail("unknown_country", { country: c }, "country");
  const rows: OsmIdRow[] = [];
  for (const country of countries) {
    const network = await networks.get(country);
    if (network) rows.push(...waysIn(network, search));
    if (rows.length > MAX_RESULT_WAYS) throw fail("too_many_results", { max: MAX_RESULT_WAYS }, "geometry");
  }
  return rows.sort((a, b) => a.osmId - b.osmId || a.country.localeCompare(b.country));
}
