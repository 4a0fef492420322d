import { mapErrors } from "../error-mapping.js";
import type { AnalysisState, StoredAnalysis } from "../../domain/records.js";
import type { Store } from "../ports/store.js";
import { fail } from "../../domain/errors.js";
import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { vendorOptionsOf } from "../../domain/analyses/vendor-options.js";
import { shapefileNames } from "./shapefiles.js";

/** is_massive_queue: the job waits behind every ordinary one, as the vendor's bulk queue does. */
export const MASSIVE_QUEUE_PRIORITY = -1;

/** Job kind and payload of an analysis run. */
export const ANALYSIS_JOB = "analysis";
export interface AnalysisJobPayload {
  analysisUuid: string;
}

/** The status strings of the interface; queued and running are both `Processing`. */
export const PUBLIC_STATUS: Record<AnalysisState, string> = {
  queued: "Processing",
  running: "Processing",
  done: "Data Available",
  failed: "Failed",
  cancelled: "Cancelled",
  deleted: "Deleted",
};

export interface StatusEntry {
  name: string;
  uuid: string;
  status: string;
  metrics: string[];
  /** Data Available only: the shapefiles downloadable like metrics (see shapefiles.ts). */
  shapefiles?: string[];
  failure_reason?: string;
}

export function statusEntry(a: StoredAnalysis): StatusEntry {
  const entry: StatusEntry = {
    name: a.name,
    uuid: a.uuid,
    status: PUBLIC_STATUS[a.state],
    metrics: a.metrics,
  };
  if (a.state === "done") entry.shapefiles = shapefileNames(a.spec);
  if (a.state === "failed") entry.failure_reason = a.failureReason ?? "the analysis failed";
  return entry;
}

/**
 * Stores the analysis (a name clash is a 409 before anything is queued), then enqueues its job and
 * records it. The job is enqueued only once the analysis is committed: a job queue outside the database
 * (Redis) could otherwise hand the job to a worker that does not see the analysis yet. A process that
 * dies in between leaves an analysis without a job, which `requeueOrphans` enqueues.
 */
export async function createAnalysis(store: Store, spec: AnalysisSpec): Promise<StoredAnalysis> {
  const created = await store.transaction(async () => {
    const analysis = await mapErrors(async () => await store.analyses.create({ spec, jobId: null }));
    await store.tags.tag(spec.orgId, spec.tags, [spec.uuid], spec.loginEmail);
    return analysis;
  });
  return await enqueueAnalysis(store, created);
}

/**
 * Enqueues a job for the analysis and records it in place of its current one. When another process
 * recorded one first, this job is cancelled again (the runner also skips a job that is not its
 * analysis's).
 */
async function enqueueAnalysis(store: Store, analysis: StoredAnalysis): Promise<StoredAnalysis> {
  const payload: AnalysisJobPayload = { analysisUuid: analysis.uuid };
  const priority = vendorOptionsOf(analysis.spec).massiveQueue ? MASSIVE_QUEUE_PRIORITY : 0;
  const job = await store.jobs.enqueue(ANALYSIS_JOB, payload, { priority });
  if (!(await store.analyses.assignJob(analysis.uuid, job.id, analysis.jobId)))
    await store.jobs.cancel(job.id);
  return (await store.analyses.getByUuid(analysis.uuid)) ?? analysis;
}

/** How long an analysis may be without a job before it counts as orphaned (its creator may be enqueueing it). */
export const ORPHAN_GRACE_MS = 60_000;

/**
 * The outbox of a job queue outside the database: every queued or running analysis whose job is missing
 * (its creator died before enqueueing it, Redis lost it) or ended (taken by a runner before the analysis
 * was visible) gets a new job. Run by every worker process on start and then periodically.
 */
export async function requeueOrphans(store: Store, now = Date.now()): Promise<StoredAnalysis[]> {
  const requeued: StoredAnalysis[] = [];
  for (const analysis of await store.analyses.unfinished()) {
    const orphaned =
      analysis.jobId === null
        ? now - Date.parse(analysis.createdAt) >= ORPHAN_GRACE_MS
        : !(await isLiveJob(store, analysis.jobId));
    if (orphaned) requeued.push(await enqueueAnalysis(store, analysis));
  }
  return requeued;
}

async function isLiveJob(store: Store, jobId: string): Promise<boolean> {
  const job = await store.jobs.get(jobId);
  return job !== null && (job.state === "queued" || job.state === "running");
}

export async function requireAnalysis(
  store: Store,
  orgId: string,
  nameOrUuid: string,
  field?: string,
): Promise<StoredAnalysis> {
  const found = await store.analyses.get(orgId, nameOrUuid);
  if (!found) throw fail("unknown_analysis", { analysis: nameOrUuid }, field);
  return found;
}

/** Pending or running → Cancelled; the runner sees the cancelled job and stops its worker. */
export async function cancelAnalysis(store: Store, orgId: string, uuid: string): Promise<StoredAnalysis> {
  const a = await requireAnalysis(store, orgId, uuid, "uuid");
  await store.transaction(async () => {
    if (!(await store.analyses.cancel(a.uuid)))
      throw fail("analysis_finished", { analysis: a.name, status: PUBLIC_STATUS[a.state] });
    if (a.jobId) await store.jobs.cancel(a.jobId);
  });
  return (await store.analyses.getByUuid(a.uuid))!;
}

/** Finished (Data Available, Failed, Cancelled) → Deleted: results dropped, the name free for a new analysis. */
export async function deleteAnalysis(store: Store, orgId: string, uuid: string): Promise<StoredAnalysis> {
  const a = await requireAnalysis(store, orgId, uuid, "uuid");
  if (a.state === "deleted") throw fail("analysis_already_deleted", { analysis: a.name });
  if (!(await store.analyses.markDeleted(a.uuid))) throw fail("analysis_processing", { analysis: a.name });
  return (await store.analyses.getByUuid(a.uuid))!;
}

/** Downloads need a Data Available analysis: 404 once deleted, 409 otherwise, saying why. */
export function assertDataAvailable(a: StoredAnalysis): void {
  if (a.state === "deleted") throw fail("analysis_deleted", { analysis: a.name });
  if (a.state !== "done") {
    const why =
      a.state === "failed"
        ? `it failed: ${a.failureReason}`
        : a.state === "cancelled"
          ? "it was cancelled"
          : "it is still Processing; poll /analyses/status until it is Data Available";
    throw fail("analysis_not_available", { analysis: a.name, reason: why });
  }
}

/** A metric's CSV of a completed analysis; 409 while it is not (yet) available, 404 for an unknown metric. */
export async function metricCsv(store: Store, a: StoredAnalysis, metric: string): Promise<string> {
  assertDataAvailable(a);
  const csv = a.metrics.includes(metric) ? await store.analyses.result(a.uuid, metric) : null;
  if (csv === null)
    throw fail("unknown_metric", { analysis: a.name, metric, available: a.metrics.join(", ") }, "metric");
  return csv;
}
