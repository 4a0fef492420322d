/** The zone-set calls the editor and the list make, over the public API. */
import { ApiError, type StreetflowApi } from "../../api.js";
import type { Issue, zoneSetBody } from "./model.js";

export interface CreatedZoneSet {
  name: string;
  uuid: string;
}

export const createZoneSet = (api: StreetflowApi, body: ReturnType<typeof zoneSetBody>) =>
  api.request<CreatedZoneSet>("POST", "/api/v2/zone_sets", body);

export const deleteZoneSet = (api: StreetflowApi, uuid: string) =>
  api.request<CreatedZoneSet>("DELETE", `/api/v2/zone_sets/${encodeURIComponent(uuid)}`);

/**
 * A refused save as field issues: the 400's list, or the one field a 403 (login not a member) or a 409 (name
 * taken) names; null for failures that are not about the request's content (network, server error, 401).
 */
export function issuesOf(err: unknown): Issue[] | null {
  if (!(err instanceof ApiError) || err.status === 401 || err.status >= 500 || err.status === 0) return null;
  if (err.issues.length > 0) return err.issues;
  return [{ field: err.field ?? "", message: err.message }];
}
