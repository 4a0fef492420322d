import { timeZoneOfCountry } from "../engine/time.js";
import type { NetworkImportInfo } from "./records.js";
import type { Store } from "../app/ports/store.js";
import { fail } from "./errors.js";

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

/** The zone stored with an import, or the country table's for imports made before zones were stored. */
export function timeZoneOfImport(info: Pick<NetworkImportInfo, "country" | "timeZone">): string {
  return info.timeZone ?? timeZoneOfCountry(info.country);
}

/** An IANA zone name as Intl knows it (e.g. "Europe/Monaco"); 400 `invalid_time_zone` otherwise. */
export function checkTimeZone(name: string): string {
  try {
    return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw fail("invalid_time_zone", { name }, "time_zone");
  }
}
