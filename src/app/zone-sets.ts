import { mapErrors } from "./error-mapping.js";
import { assertMember, requireOrganization } from "./accounts.js";
import type { AppContext } from "./context.js";
import type { Store } from "./ports/store.js";
import type { StoredZoneSet } from "../domain/records.js";
import { fail } from "../domain/errors.js";
import {
  checkZoneSetRequest,
  MAX_ZONES_PER_SET,
  namesOsmIds,
  requireLoginEmail,
  toStoredZoneSet,
  type NormalisedZoneSet,
} from "../domain/zone-sets.js";
import { planZoneUpload } from "../domain/zone-split.js";

/** Zone-set use cases run in one organization. */
export interface ZoneSetContext extends AppContext {
  orgId: string;
  /** Overrides MAX_ZONES_PER_SET: the CLI validates a whole file before splitting it. */
  maxZones?: number;
}

/**
 * Validates a POST /zone_sets body (or a file read by the CLI): the login must belong to the organization
 * (403 otherwise), then every rule of the spec (domain/zone-sets.ts), all problems in one ValidationError.
 */
export async function validateZoneSetRequest(body: unknown, ctx: ZoneSetContext): Promise<NormalisedZoneSet> {
  await assertMember(ctx.store, requireLoginEmail(body), ctx.orgId);
  // Only OSM way ids need the imported countries.
  const countries = namesOsmIds(body) ? (await ctx.store.network.countries()).map((c) => c.country) : [];
  return await checkZoneSetRequest(body, { networks: ctx.networks, countries, maxZones: ctx.maxZones });
}

/** Validates and stores one zone set (409 when its name is taken in the organization). */
export async function createZoneSet(body: unknown, ctx: ZoneSetContext): Promise<StoredZoneSet> {
  const stored = toStoredZoneSet(ctx.orgId, await validateZoneSetRequest(body, ctx));
  await mapErrors(async () => await ctx.store.zoneSets.create(stored));
  return stored;
}

/** The organization's zone set by name (case-insensitive) or uuid; 404 naming `field` otherwise. */
export async function requireZoneSet(
  store: Store,
  orgId: string,
  nameOrUuid: string,
  field = "name_or_uuid",
): Promise<StoredZoneSet> {
  const set = await store.zoneSets.get(orgId, nameOrUuid);
  if (!set) throw fail("zone_set_not_found", { zone_set: nameOrUuid }, field);
  return set;
}

/**
 * Deletes a zone set unless an analysis that is not deleted references it
 * (409 naming them): its results, or its computation, read the set's zones.
 */
export async function deleteZoneSet(store: Store, orgId: string, nameOrUuid: string): Promise<StoredZoneSet> {
  const set = await requireZoneSet(store, orgId, nameOrUuid);
  const users = (await store.analyses.list(orgId))
    .filter(
      (a) =>
        a.state !== "deleted" &&
        [...a.spec.originSets, ...a.spec.destinationSets].some((ref) => ref.uuid === set.uuid),
    )
    .map((a) => `"${a.name}"`);
  if (users.length)
    throw fail("zone_set_in_use", { zone_set: set.name, analyses: users.join(", ") }, "name_or_uuid");
  await store.zoneSets.delete(orgId, set.uuid);
  return set;
}

export interface ZoneUploadOptions {
  /** The features of the uploaded file (GeoJSON features, as POST /zone_sets takes them). */
  features: unknown[];
  name: string;
  /** Organization name or id. */
  org: string;
  email: string;
  maxZones?: number;
  withCalibration?: boolean;
}

/**
 * Validates a whole upload (the CLI's `zones upload`) like POST /zone_sets, then stores it as one set or,
 * above `maxZones`, as geohash-grouped sets NAME_1, NAME_2, … in one transaction.
 */
export async function uploadZoneSets(ctx: AppContext, opts: ZoneUploadOptions): Promise<StoredZoneSet[]> {
  const org = await requireOrganization(ctx.store, opts.org);
  await assertMember(ctx.store, opts.email, org.id, "email");
  const body = {
    zones: opts.features,
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
