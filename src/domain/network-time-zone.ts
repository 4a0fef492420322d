import { timeZoneOfCountry } from "../engine/time.js";
import type { NetworkImportInfo } from "./records.js";
import { fail } from "./errors.js";

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
