import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import type { Command } from "commander";
import shp from "shpjs";
import { requireOrganization } from "../app/accounts.js";
import { fail } from "../domain/errors.js";
import { MAX_ZONES_PER_SET } from "../domain/zone-sets.js";
import { uploadZoneSets } from "../app/zone-sets.js";
import { withContext } from "./context.js";

/** The file's features: GeoJSON (.geojson/.json) or a zipped shapefile (.zip, every layer). */
export async function readZoneFile(file: string): Promise<unknown[]> {
  const ext = extname(file).toLowerCase();
  if (ext === ".zip") {
    const parsed = await shp(await readFile(file));
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((layer) => layer.features);
  }
  if (ext !== ".geojson" && ext !== ".json")
    throw fail("unsupported_file", { file, reason: "expected a .geojson, .json or zipped shapefile (.zip)" });
  const json: unknown = JSON.parse(await readFile(file, "utf8"));
  if (Array.isArray(json)) return json;
  const features = (json as { features?: unknown } | null)?.features;
  if (!Array.isArray(features))
    throw fail("unsupported_file", { file, reason: "not a GeoJSON FeatureCollection" });
  return features;
}

export function zoneCommands(program: Command): void {
  const zones = program.command("zones").description("zone sets");
  zones
    .command("upload <file>")
    .description("create zone sets from GeoJSON or a zipped shapefile, split by geohash when large")
    .requiredOption("--name <name>", "zone set name (parts are named NAME_1, NAME_2, …)")
    .requiredOption("--org <org>", "organization name or id")
    .requiredOption("--email <email>", "login e-mail of a user of the organization")
    .option("--max-zones <n>", `zones per set, at most ${MAX_ZONES_PER_SET}`, String(MAX_ZONES_PER_SET))
    .option("--with-calibration", "allow calibration properties on pass-through zones", false)
    .action(
      (
        file: string,
        opts: { name: string; org: string; email: string; maxZones: string; withCalibration: boolean },
      ) =>
        withContext(program, async (ctx) => {
          const features = await readZoneFile(file);
          const sets = await uploadZoneSets(ctx, { ...opts, features, maxZones: Number(opts.maxZones) });
          for (const s of sets) console.log(`${s.name}  ${s.uuid}  ${s.zoneCount} zones`);
        }),
    );
  zones
    .command("list")
    .requiredOption("--org <org>", "organization name or id")
    .action((opts: { org: string }) =>
      withContext(program, async ({ store }) => {
        const org = await requireOrganization(store, opts.org);
        for (const s of await store.zoneSets.list(org.id))
          console.log(`${s.uuid}  ${s.name}  ${s.geomType}  ${s.zoneCount} zones  ${s.createdAt}`);
      }),
    );
}
