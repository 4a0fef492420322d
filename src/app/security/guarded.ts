/**
 * The organization's state-changing use cases behind a role check, each recorded in the audit log. Routes
 * call these rather than the unguarded functions, so a role is enforced whatever page or client asks.
 */
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { cancelAnalysis, createAnalysis, deleteAnalysis } from "../analyses/lifecycle.js";
import { createTag, tagAnalyses, untagAnalyses } from "../analyses/tags.js";
import { createZoneSet, deleteZoneSet, type ZoneSetContext } from "../zone-sets.js";
import type { StoredAnalysis, StoredZoneSet } from "../../domain/records.js";
import type { Store } from "../ports/store.js";
import { requireRole, type Principal } from "../../domain/security/principal.js";

export async function audit(
  store: Store,
  principal: Principal,
  action: string,
  target: string | null,
): Promise<void> {
  await store.security.audit({
    orgId: principal.orgId,
    at: new Date().toISOString(),
    actor: principal.actor,
    action,
    target,
  });
}

const named = (x: { name: string; uuid: string }) => `${x.name} (${x.uuid})`;

export async function guardedCreateZoneSet(
  principal: Principal,
  body: unknown,
  ctx: Omit<ZoneSetContext, "orgId">,
): Promise<StoredZoneSet> {
  requireRole(principal, "analyst", "creating a zone set");
  const set = await createZoneSet(body, { ...ctx, orgId: principal.orgId });
  await audit(ctx.store, principal, "zone_set.create", named(set));
  return set;
}

export async function guardedDeleteZoneSet(
  store: Store,
  principal: Principal,
  nameOrUuid: string,
): Promise<StoredZoneSet> {
  requireRole(principal, "analyst", "deleting a zone set");
  const set = await deleteZoneSet(store, principal.orgId, nameOrUuid);
  await audit(store, principal, "zone_set.delete", named(set));
  return set;
}

/** Role first, so a viewer is refused before the (costly) validation of the request. */
export function assertMayAnalyse(principal: Principal): void {
  requireRole(principal, "analyst", "creating an analysis");
}

export async function guardedCreateAnalysis(
  store: Store,
  principal: Principal,
  spec: AnalysisSpec,
): Promise<StoredAnalysis> {
  assertMayAnalyse(principal);
  const created = await createAnalysis(store, spec);
  await audit(store, principal, "analysis.create", named(created));
  return created;
}

const lifecycle = { cancel: cancelAnalysis, delete: deleteAnalysis };

export async function guardedAnalysisAction(
  store: Store,
  principal: Principal,
  action: keyof typeof lifecycle,
  uuid: string,
): Promise<StoredAnalysis> {
  requireRole(principal, "analyst", `${action === "cancel" ? "cancelling" : "deleting"} an analysis`);
  const a = await lifecycle[action](store, principal.orgId, uuid);
  await audit(store, principal, `analysis.${action}`, named(a));
  return a;
}

export async function guardedCreateTag(
  store: Store,
  principal: Principal,
  email: string,
  tagName: unknown,
): Promise<string> {
  requireRole(principal, "analyst", "creating a tag");
  const name = await createTag(store, principal.orgId, email, tagName);
  await audit(store, principal, "tag.create", name);
  return name;
}

export async function guardedTagging(
  store: Store,
  principal: Principal,
  action: "tag" | "untag",
  body: Parameters<typeof tagAnalyses>[2],
): Promise<void> {
  requireRole(principal, "analyst", action === "tag" ? "tagging analyses" : "removing tags");
  await (action === "tag" ? tagAnalyses : untagAnalyses)(store, principal.orgId, body);
}
