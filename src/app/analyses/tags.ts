import type { Store } from "../ports/store.js";
import { assertMember } from "../accounts.js";
import { fail, ValidationError, type Issue } from "../../domain/errors.js";
import { requireAnalysis } from "./lifecycle.js";

/**
 * Tags belong to an organization; analyses carry any number of them. Names are
 * trimmed, 1 to 50 characters, and unique case-insensitively.
 */
export const MAX_TAG_LENGTH = 50;

function tagName(value: unknown, field: string, issues: Issue[]): string | null {
  const name = typeof value === "string" ? value.trim() : "";
  if (name === "" || name.length > MAX_TAG_LENGTH) {
    issues.push({ field, message: `must be a tag name of 1 to ${MAX_TAG_LENGTH} characters` });
    return null;
  }
  return name;
}

export function createTag(store: Store, orgId: string, email: string, value: unknown): string {
  assertMember(store, email, orgId);
  const issues: Issue[] = [];
  const name = tagName(value, "tag_name", issues);
  if (!name) throw new ValidationError(issues);
  if (!store.tags.create(orgId, name, email)) throw fail("tag_exists", { name }, "tag_name");
  return name;
}

export interface TagAnalysesRequest {
  insight_login_email: string;
  tags: unknown[];
  analyses: { name?: string; uuid?: string }[];
}

/** The tags and analyses of a tag or untag call; an unknown analysis is a 404 naming it. */
function readTagAnalyses(store: Store, orgId: string, body: TagAnalysesRequest) {
  assertMember(store, body.insight_login_email, orgId);
  const issues: Issue[] = [];
  const names = body.tags.flatMap((t, i) => tagName(t, `tags[${i}]`, issues) ?? []);
  body.analyses.forEach((ref, i) => {
    if (!ref.uuid && !ref.name) issues.push({ field: `analyses[${i}]`, message: "give name or uuid" });
  });
  if (issues.length) throw new ValidationError(issues);
  const uuids = body.analyses.map(
    (ref, i) => requireAnalysis(store, orgId, (ref.uuid ?? ref.name)!, `analyses[${i}]`).uuid,
  );
  return { names: [...new Set(names)], uuids: [...new Set(uuids)] };
}

/** Adds the tags to the analyses; tags the organization does not have yet are created. */
export function tagAnalyses(store: Store, orgId: string, body: TagAnalysesRequest): void {
  const { names, uuids } = readTagAnalyses(store, orgId, body);
  store.tags.tag(orgId, names, uuids, body.insight_login_email);
}

export function untagAnalyses(store: Store, orgId: string, body: TagAnalysesRequest): void {
  const { names, uuids } = readTagAnalyses(store, orgId, body);
  store.tags.untag(orgId, names, uuids);
}
