import { assertMember } from "../accounts.js";
import type { Store } from "../ports/store.js";
import type { StoredZoneSet } from "../../domain/records.js";
import {
  analysisLoginEmail,
  checkAnalysisRequest,
  zoneSetReferences,
  type AnalysisSpec,
  type ValidationInputs,
} from "../../domain/analyses/spec.js";

/** What validation reads: the store and the loaded road networks, in one organization. */
export interface AnalysisRequestContext {
  store: Store;
  networks: ValidationInputs["networks"];
  orgId: string;
}

/**
 * Validates a POST /analyses body against the organization's data and returns the normalised spec.
 * The login must belong to the organization (403 at once); then the rules (domain/analyses/spec.ts) run
 * on what is read here, every problem collected into one ValidationError (400).
 */
export async function validateAnalysisRequest(
  body: unknown,
  ctx: AnalysisRequestContext,
): Promise<AnalysisSpec> {
  await assertMember(ctx.store, analysisLoginEmail(body), ctx.orgId);
  return await checkAnalysisRequest(body, {
    orgId: ctx.orgId,
    zoneSets: await referencedZoneSets(ctx, zoneSetReferences(body)),
    importedCountries: (await ctx.store.network.countries()).map((c) => c.country),
    networks: ctx.networks,
    presetAreas: ctx.store.presetAreas,
    tripMonths: async (country, classes, sources) =>
      await ctx.store.tripStats.monthsWithTrips(country, classes, sources),
  });
}

/** The referenced zone sets that exist, by reference; the checks report the others. */
async function referencedZoneSets(ctx: AnalysisRequestContext, refs: string[]) {
  const found = new Map<string, StoredZoneSet>();
  for (const ref of refs) {
    const set = await ctx.store.zoneSets.get(ctx.orgId, ref);
    if (set) found.set(ref, set);
  }
  return found;
}
