import { basename } from "node:path";
import { readOsmNetwork } from "../engine/network/osm-import.js";
import { mapErrors } from "./error-mapping.js";
import { checkTimeZone } from "../domain/network-time-zone.js";
import { presetAreasOf } from "../domain/preset-geographies.js";
import { timeZoneOfCountry } from "../engine/time.js";
import type { AppContext } from "./context.js";

/**
 * Reads an OSM file into segments and boundaries (the preset geographies) and replaces the
 * country's network and presets in the store, together.
 */
export async function importNetwork(
  ctx: AppContext,
  file: string,
  country: string,
  log: (line: string) => void,
  timeZone?: string,
): Promise<number> {
  const code = country.toLowerCase();
  // Checked before the (long) read, so a typo costs nothing.
  const zone = timeZone === undefined ? timeZoneOfCountry(code) : checkTimeZone(timeZone);
  const read = await mapErrors(() => readOsmNetwork(file, { onProgress: log }));
  const { segments, transit } = read;
  const areas = presetAreasOf(code, read.areas);
  await ctx.store.transaction(async () => {
    await ctx.store.network.replaceCountry(
      {
        country: code,
        source: basename(file),
        segmentCount: segments.length,
        importedAt: new Date().toISOString(),
        timeZone: zone,
      },
      segments,
    );
    await ctx.store.network.replaceTransit(code, transit);
    await ctx.store.presetAreas.replaceCountry(code, areas);
  });
  ctx.networks.invalidate(code);
  const rail = transit.filter((r) => r.kind === "rail").length;
  log(
    `Imported ${segments.length} road segments for "${code}" (local time ${zone}); ` +
      `transit layer: ${rail} rail lines, ${transit.length - rail} bus routes`,
  );
  log(`Imported ${areas.length} boundaries as preset geographies (${summary(areas)})`);
  return segments.length;
}

function summary(areas: readonly { geographyType: string }[]): string {
  const counts = new Map<string, number>();
  for (const a of areas) counts.set(a.geographyType, (counts.get(a.geographyType) ?? 0) + 1);
  return [...counts].map(([type, n]) => `${type}: ${n}`).join(", ") || "none";
}
