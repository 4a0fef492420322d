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

export async function createTag(store: Store, orgId: string, email: string, value: unknown): Promise<string> {
  await assertMember(store, email, orgId);
  const issues: Issue[] = [];
  const name = tagName(value, "tag_name", issues);
  if (!name) throw new ValidationError(issues);
  if (!(await store.tags.create(orgId, name, email))) throw fail("tag_exists", { name }, "tag_name");
  return name;
}

export interface TagAnalysesRequest {
  insight_login_email: string;
  tags: unknown[];
  analyses: { name?: string; uuid?: string }[];
}

/** The tags and analyses of a tag or untag call; an unknown analysis is a 404 naming it. */
async function readTagAnalyses(store: Store, orgId: string, body: TagAnalysesRequest) {
  await assertMember(store, body.insight_login_email, orgId);
  const issues: Issue[] = [];
  const names = body.tags.flatMap((t, i) => tagName(t, `tags[${i}]`, issues) ?? []);
  body.analyses.forEach((ref, i) => {
    if (!ref.uuid && !ref.name) issues.push({ field: `analyses[${i}]`, message: "give name or uuid" });
  });
  if (issues.length) throw new ValidationError(issues);
  const uuids: string[] = [];
  for (const [i, ref] of body.analyses.entries())
    uuids.push((await requireAnalysis(store, orgId, (ref.uuid ?? ref.name)!, `analyses[${i}]`)).uuid);
  return { names: [...new Set(names)], uuids: [...new Set(uuids)] };
}

/** Adds the tags to the analyses; tags the organization does not have yet are created. */
export async function tagAnalyses(store: Store, orgId: string, body: TagAnalysesRequest): Promise<void> {
  const { names, uuids } = await readTagAnalyses(store, orgId, body);
  await store.tags.tag(orgId, names, uuids, body.insight_login_email);
}

export async function untagAnalyses(store: Store, orgId: string, body: TagAnalysesRequest): Promise<void> {
  const { names, uuids } = await readTagAnalyses(store, orgId, body);
  await store.tags.untag(orgId, names, uuids);
}
