import { mapErrors } from "../app/error-mapping.js";
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import type { Command } from "commander";
import shp from "shpjs";
import { assertMember, requireOrganization } from "../app/accounts.js";
import { fail } from "../domain/errors.js";
import { MAX_ZONES_PER_SET, toStoredZoneSet } from "../domain/zone-sets.js";
import { validateZoneSetRequest } from "../app/zone-sets.js";
import { planZoneUpload } from "../domain/zone-split.js";
import type { AppContext } from "../app/context.js";
import type { StoredZoneSet } from "../domain/records.js";
import { withContext } from "./context.js";

export interface ZoneUploadOptions {
  file: string;
  name: string;
  /** Organization name or id. */
  org: string;
  email: string;
  maxZones?: number;
  withCalibration?: boolean;
}

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

/**
 * Validates a whole file like POST /zone_sets, then stores it as one set or,
 * above `maxZones`, as geohash-grouped sets NAME_1, NAME_2, … in one transaction.
 */
export async function uploadZoneFile(ctx: AppContext, opts: ZoneUploadOptions): Promise<StoredZoneSet[]> {
  const org = await requireOrganization(ctx.store, opts.org);
  await assertMember(ctx.store, opts.email, org.id, "email");
  const features = await readZoneFile(opts.file);
  const body = {
    zones: features,
    zone_set_name: opts.name,
    insight_login_email: opts.email,
    with_calibration: opts.withCalibration ?? false,
  };
  const whole = await validateZoneSetRequest(body, { ...ctx, orgId: org.id, maxZones: Infinity });
  const now = new Date();
  const sets = planZoneUpload(whole, opts.maxZones ?? MAX_ZONES_PER_SET).map((s) =>
    toStoredZoneSet(org.id, s, now),
  );
  await mapErrors(async () => await ctx.store.zoneSets.createMany(sets));
  return sets;
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
          const sets = await uploadZoneFile(ctx, { ...opts, file, maxZones: Number(opts.maxZones) });
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
