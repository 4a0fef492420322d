import type { NetworkRegistry } from "../engine/network/registry.js";
import { normalizeName, searchPlaces, type PlaceSearchResult } from "../engine/network/places.js";
import { fail } from "./errors.js";
import { charCount } from "./text-length.js";

/** Places one search answers by default, and at most. */
export const DEFAULT_PLACE_LIMIT = 10;
export const MAX_PLACE_LIMIT = 50;
/** Longest query accepted (characters, before normalization). */
export const MAX_PLACE_QUERY = 100;

/**
 * Named roads of a country's network matching `q` (see searchPlaces for the ranking). A query with no letter
 * or digit, or longer than MAX_PLACE_QUERY → 400 `invalid_query`; a limit outside 1..MAX_PLACE_LIMIT → 400
 * `invalid_limit`; a country without a network → 404 `unknown_country`.
 */
export async function findPlaces(
  networks: NetworkRegistry,
  country: string,
  q: string,
  limitText: string | undefined,
): Promise<PlaceSearchResult> {
  if (charCount(q) > MAX_PLACE_QUERY)
    throw fail("invalid_query", { reason: `q must be at most ${MAX_PLACE_QUERY} characters` }, "q");
  if (normalizeName(q) === "")
    throw fail("invalid_query", { reason: "q must contain at least one letter or digit" }, "q");
  const limit = parseLimit(limitText);
  const network = await networks.get(country);
  if (!network) throw fail("unknown_country", { country }, "country");
  return searchPlaces(network, q, limit);
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PLACE_LIMIT;
  const limit = /^\d{1,4}$/.test(text.trim()) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= MAX_PLACE_LIMIT))
    throw fail("invalid_limit", { field: "limit", rule: `an integer from 1 to ${MAX_PLACE_LIMIT}` }, "limit");
  return limit;
}
