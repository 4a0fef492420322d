import { basename } from "node:path";
import { readOsmNetwork } from "../engine/network/osm-import.js";
import { checkTimeZone } from "../domain/network-time-zone.js";
import { timeZoneOfCountry } from "../engine/time.js";
import type { Runtime } from "../runtime.js";

/** Reads an OSM file into segments and replaces the country's network in the store. */
export async function importNetwork(
  rt: Runtime,
  file: string,
  country: string,
  log: (line: string) => void,
  timeZone?: string,
): Promise<number> {
  const code = country.toLowerCase();
  // Checked before the (long) read, so a typo costs nothing.
  const zone = timeZone === undefined ? timeZoneOfCountry(code) : checkTimeZone(timeZone);
  const { segments, transit } = await readOsmNetwork(file, { onProgress: log });
  rt.store.transaction(() => {
    rt.store.network.replaceCountry(
      {
        country: code,
        source: basename(file),
        segmentCount: segments.length,
        importedAt: new Date().toISOString(),
        timeZone: zone,
      },
      segments,
    );
    rt.store.network.replaceTransit(code, transit);
  });
  rt.networks.invalidate(code);
  const rail = transit.filter((r) => r.kind === "rail").length;
  log(
    `Imported ${segments.length} road segments for "${code}" (local time ${zone}); ` +
      `transit layer: ${rail} rail lines, ${transit.length - rail} bus routes`,
  );
  return segments.length;
}
