import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { assertMember } from "../../app/accounts.js";
import {
  PUBLIC_STATUS,
  assertDataAvailable,
  metricCsv,
  requireAnalysis,
  statusEntry,
} from "../../app/analyses/lifecycle.js";
import { ignoredRequestFields, otherTypeFields, otherTypeFieldWarnings } from "../../domain/analyses/spec.js";
import { validateAnalysisRequest } from "../../app/analyses/validate.js";
import { AnalysisRequestSchema } from "../../domain/analyses/request.js";
import {
  ignoredFieldWarnings,
  vendorOptionsJson,
  vendorOptionsOf,
} from "../../domain/analyses/vendor-options.js";
import { braceless } from "../errors.js";
import { analysisShapefile, shapefileNames } from "../../app/analyses/shapefiles.js";
import { reviewDetail } from "../../app/analyses/od-review.js";
import {
  assertMayAnalyse,
  guardedAnalysisAction,
  guardedCreateAnalysis,
} from "../../app/security/guarded.js";
import type { Store } from "../../app/ports/store.js";
import type { StoredAnalysis } from "../../domain/records.js";
import { KeyQuery, LoginEmailBody, SuccessCreated } from "../schemas.js";
import type { AnalysisDetail, AnalysisEntry } from "../../shared/responses.js";

/**
 * What the route validates: the envelope only. validateAnalysisRequest checks every field and reports all
 * problems at once (a schema would stop at the first); /docs shows the real body, AnalysisRequestSchema.
 */
const AnalysisBody = Type.Object(
  { insight_login_email: AnalysisRequestSchema.properties.insight_login_email },
  { additionalProperties: true },
);

const AnalysisCreated = Type.Object({
  ...SuccessCreated.properties,
  warnings: Type.Optional(
    Type.Array(Type.String(), { description: "unknown top-level fields that were ignored (also logged)" }),
  ),
});

const StatusEntry = Type.Object({
  name: Type.String(),
  uuid: Type.String(),
  status: Type.String({ description: "Processing, Data Available, Failed, Cancelled or Deleted" }),
  metrics: Type.Array(Type.String()),
  shapefiles: Type.Optional(
    Type.Array(Type.String(), { description: "Data Available: shapefiles downloadable like metrics" }),
  ),
  failure_reason: Type.Optional(Type.String()),
});
const NotFoundEntry = Type.Object({
  name: Type.Optional(Type.String()),
  uuid: Type.Optional(Type.String()),
  status: Type.Literal("Not Found"),
  error: Type.String(),
});
const StatusQuery = Type.Object({
  analyses: Type.Array(
    Type.Object({ name: Type.Optional(Type.String()), uuid: Type.Optional(Type.String()) }),
    { minItems: 1, maxItems: 1000 },
  ),
});
const LifecycleResponse = Type.Object({
  name: Type.String(),
  uuid: Type.String(),
  status: Type.Literal("success"),
  analysis_status: Type.String(),
});
const UuidParams = Type.Object({ uuid: Type.String({ maxLength: 64 }) });

const Timestamp = Type.Union([Type.String(), Type.Null()]);
const ListEntry = Type.Object({
  ...StatusEntry.properties,
  progress: Type.Number({ description: "0..1" }),
  analysis_type: Type.String(),
  travel_mode_type: Type.String(),
  country: Type.String({ description: "the road network the analysis runs on (lists filter by it)" }),
  created_at: Type.String(),
  started_at: Timestamp,
  finished_at: Timestamp,
  tags: Type.Array(Type.String(), { description: "the organization's tags the analysis carries" }),
});
const SetRef = Type.Object({ name: Type.String(), uuid: Type.String() });
const NamedSlice = Type.Object({
  name: Type.String(),
  code: Type.String({ description: "as in the request: weekdays 17, hours 0609" }),
  label: Type.String({ description: "as in the metric rows, e.g. 2: Peak AM (6am-10am)" }),
});
const AnalysisDetail = Type.Object({
  ...ListEntry.properties,
  output_type: Type.String(),
  oz_sets: Type.Array(SetRef),
  dz_sets: Type.Array(SetRef),
  date_ranges: Type.Array(Type.Object({ start_date: Type.String(), end_date: Type.String() })),
  day_types: Type.Array(NamedSlice),
  day_parts: Type.Array(NamedSlice),
  traveler_attributes: Type.Boolean(),
  trip_attributes: Type.Boolean(),
  unit_of_measurement: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  geography_type: Type.Optional(
    Type.String({
      description:
        "OD_Preset_Geography: the destinations' preset; Zone_Activity_Analysis: the preset of its home and work locations",
    }),
  ),
  metric_type: Type.Optional(
    Type.String({ description: "Network_Performance: the figures reported (all, speed or travel_time)" }),
  ),
  top_routes_count: Type.Optional(
    Type.Integer({
      description: "Top_Routes_OD / _ZA: routes kept per zone pair (zone), day type and day part",
    }),
  ),
  // The vendor options as stored (defaults filled in); docs/analyses.md says what each does.
  enable_home_work_locations: Type.Boolean(),
  hwl_enable_visitor: Type.Boolean(),
  hwl_enable_resident: Type.Boolean(),
  hwl_enable_worker: Type.Boolean(),
  aadt_calibration_year: Type.Union([Type.Integer(), Type.Null()]),
  segment_types: Type.Array(Type.String()),
  enable_15min: Type.Boolean(),
  is_massive_queue: Type.Boolean(),
  zone_intersection_type: Type.String(),
  enable_visualization: Type.Boolean(),
  enable_completion_email: Type.Boolean(),
});

const listEntry = async (
  store: Store,
  a: StoredAnalysis,
): Promise<AnalysisEntry & { started_at: string | null; finished_at: string | null }> => ({
  ...statusEntry(a),
  progress: a.progress,
  analysis_type: a.spec.analysisType,
  travel_mode_type: a.spec.travelMode,
  country: a.spec.country,
  created_at: a.createdAt,
  started_at: a.startedAt,
  finished_at: a.finishedAt,
  tags: await store.tags.tagsOf(a.uuid),
});

const pad2 = (n: number) => String(n).padStart(2, "0");

/** The type-specific parameters of a stored spec, in the request's terms. */
function typeDetail(spec: StoredAnalysis["spec"]) {
  const options = spec.options ?? {};
  return {
    ...(options.geographyType !== undefined && { geography_type: options.geographyType }),
    ...(options.homeWorkGeography !== undefined && { geography_type: options.homeWorkGeography }),
    ...(spec.analysisType === "Network_Performance" && { metric_type: options.npMetricType ?? "all" }),
    ...(options.topRoutes !== undefined && { top_routes_count: options.topRoutes }),
  };
}

/** The stored spec in the request's own terms, so a client can show (or resubmit) what was asked for. */
async function analysisDetail(
  store: Store,
  a: StoredAnalysis,
): Promise<AnalysisDetail & ReturnType<typeof vendorOptionsJson>> {
  const { spec } = a;
  return {
    ...(await listEntry(store, a)),
    output_type: spec.outputType,
    oz_sets: spec.originSets.map(({ name, uuid }) => ({ name, uuid })),
    dz_sets: spec.destinationSets.map(({ name, uuid }) => ({ name, uuid })),
    date_ranges: spec.dateRanges.map(({ start_date, end_date }) => ({ start_date, end_date })),
    day_types: spec.dayTypes.map((d) => ({ name: d.name, code: `${d.start}${d.end}`, label: d.label })),
    day_parts: spec.dayParts.map((d) => ({
      name: d.name,
      code: `${pad2(d.start)}${pad2(d.end)}`,
      label: d.label,
    })),
    traveler_attributes: spec.travelerAttributes,
    trip_attributes: spec.tripAttributes,
    unit_of_measurement: spec.unit,
    description: spec.description,
    ...typeDetail(spec),
    ...vendorOptionsJson(vendorOptionsOf(spec)),
  };
}

const ReviewDetail = Type.Object({
  name: Type.String(),
  uuid: Type.String(),
  analysis_status: Type.String(),
  review_status: Type.String({
    description: "passed, needs_review (something flagged), pending (Processing) or not_available",
  }),
  min_zone_sample: Type.Optional(Type.Integer({ description: "zones with fewer sampled trips are flagged" })),
  zones: Type.Optional(
    Type.Array(
      Type.Object({
        side: Type.String(),
        zone_id: Type.Union([Type.Integer(), Type.String(), Type.Null()]),
        zone_name: Type.String(),
        sample_trips: Type.Integer(),
        flagged: Type.Boolean(),
      }),
    ),
  ),
  periods: Type.Optional(
    Type.Array(
      Type.Object({
        data_period: Type.String(),
        day_type: Type.String(),
        days_with_data: Type.Integer(),
        approximate_device_count: Type.Integer(),
        approximate_trip_count: Type.Integer(),
        flagged: Type.Boolean(),
      }),
    ),
  ),
  status: Type.Literal("success"),
});

const lifecycleResponse = (a: StoredAnalysis) => ({
  name: a.name,
  uuid: a.uuid,
  status: "success" as const,
  analysis_status: PUBLIC_STATUS[a.state],
});

const fileName = (a: StoredAnalysis, part: string) => `${a.name}_${part}`.replace(/[^\w.-]+/g, "_");

/** A metric as CSV, or one of the analysis' shapefiles as a zip: both are downloaded by the same path. */
async function sendDownload(store: Store, reply: FastifyReply, a: StoredAnalysis, name: string) {
  if (shapefileNames(a.spec).includes(name)) {
    assertDataAvailable(a);
    return reply
      .type("application/zip")
      .header("content-disposition", `attachment; filename="${fileName(a, name)}.zip"`)
      .send(await analysisShapefile(store, a, name));
  }
  const csv = await metricCsv(store, a, name);
  return reply
    .type("text/csv; charset=utf-8")
    .header("content-disposition", `attachment; filename="${fileName(a, name)}.csv"`)
    .send(csv);
}

export const analysisRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, networks } = app.deps;

  app.post(
    "/analyses",
    {
      schema: {
        summary: "Create an analysis; it is queued and computed in the background",
        tags: ["analyses"],
        querystring: KeyQuery,
        body: AnalysisBody,
        response: { 201: AnalysisCreated },
      },
      config: { documentedBody: AnalysisRequestSchema },
    },
    async (request, reply) => {
      assertMayAnalyse(request.principal);
      const spec = await validateAnalysisRequest(request.body, {
        store,
        networks,
        orgId: request.apiKey.orgId,
      });
      const created = await guardedCreateAnalysis(store, request.principal, spec);
      const ignored = ignoredRequestFields(request.body);
      if (ignored.length)
        request.log.warn({ analysis: created.uuid, ignored }, "analysis request: unknown fields ignored");
      const otherType = otherTypeFields(request.body, spec.analysisType);
      if (otherType.length)
        request.log.warn(
          { analysis: created.uuid, ignored: otherType },
          "analysis request: fields of other analysis types ignored",
        );
      const warningList = [
        ...ignoredFieldWarnings(ignored),
        ...otherTypeFieldWarnings(otherType, spec.analysisType),
      ];
      const warnings = warningList.length ? { warnings: warningList } : {};
      return reply
        .status(201)
        .send({ name: created.name, status: "success" as const, uuid: created.uuid, ...warnings });
    },
  );

  app.post(
    "/analyses/status",
    {
      schema: {
        summary: "Status and downloadable metrics of analyses, by name or uuid",
        tags: ["analyses"],
        querystring: KeyQuery,
        body: StatusQuery,
        response: {
          200: Type.Object({
            analyses: Type.Array(Type.Union([StatusEntry, NotFoundEntry])),
            status: Type.Literal("success"),
          }),
        },
      },
    },
    async (request) => {
      const orgId = request.apiKey.orgId;
      const analyses = await Promise.all(
        request.body.analyses.map(async (ref) => {
          const wanted = ref.uuid ?? ref.name;
          const found = wanted === undefined ? null : await store.analyses.get(orgId, wanted);
          if (found) return statusEntry(found);
          const error =
            wanted === undefined ? "give name or uuid" : `no analysis "${wanted}" in this organization`;
          return { ...ref, status: "Not Found" as const, error: braceless(error) };
        }),
      );
      return { analyses, status: "success" as const };
    },
  );

  app.get(
    "/analyses",
    {
      schema: {
        summary: "The organization's analyses, newest first (deleted ones left out)",
        tags: ["analyses"],
        querystring: Type.Object({
          ...KeyQuery.properties,
          tag: Type.Optional(
            Type.String({ description: "only analyses carrying this tag (case-insensitive)" }),
          ),
        }),
        response: {
          200: Type.Object({
            analyses: Type.Array(ListEntry),
            status: Type.Literal("success"),
          }),
        },
      },
    },
    async (request) => {
      const wanted = request.query.tag?.trim().toLowerCase();
      const live = (await store.analyses.list(request.apiKey.orgId)).filter((a) => a.state !== "deleted");
      const entries = await Promise.all(live.map(async (a) => await listEntry(store, a)));
      return {
        analyses: wanted ? entries.filter((e) => e.tags.some((t) => t.toLowerCase() === wanted)) : entries,
        status: "success" as const,
      };
    },
  );

  app.get(
    "/analyses/:uuid",
    {
      schema: {
        summary: "One analysis: its status, metrics and the parameters it was created with",
        tags: ["analyses"],
        querystring: KeyQuery,
        params: UuidParams,
        response: {
          200: Type.Object({ analysis: AnalysisDetail, status: Type.Literal("success") }),
        },
      },
    },
    async (request) => ({
      analysis: await analysisDetail(
        store,
        await requireAnalysis(store, request.apiKey.orgId, request.params.uuid, "uuid"),
      ),
      status: "success" as const,
    }),
  );

  app.get(
    "/analyses/:uuid/review_detail",
    {
      schema: {
        summary: "Coverage review: zones and periods with too little sampled data are flagged",
        tags: ["analyses"],
        querystring: KeyQuery,
        params: UuidParams,
        response: { 200: ReviewDetail },
      },
    },
    async (request) => ({
      ...(await reviewDetail(
        store,
        await requireAnalysis(store, request.apiKey.orgId, request.params.uuid, "uuid"),
      )),
      status: "success" as const,
    }),
  );

  // Cancel and delete share their shape: the login must belong to the organization, the answer is the new state.
  const lifecycleRoute = (
    method: "POST" | "DELETE",
    url: string,
    summary: string,
    action: "cancel" | "delete",
  ) =>
    app.route({
      method,
      url,
      schema: {
        summary,
        tags: ["analyses"],
        querystring: KeyQuery,
        params: UuidParams,
        body: LoginEmailBody,
        response: { 200: LifecycleResponse },
      },
      handler: async (request) => {
        await assertMember(store, request.body.insight_login_email, request.apiKey.orgId);
        return lifecycleResponse(
          await guardedAnalysisAction(store, request.principal, action, request.params.uuid),
        );
      },
    });
  lifecycleRoute("POST", "/analyses/cancel/:uuid", "Cancel a Processing analysis", "cancel");
  lifecycleRoute(
    "DELETE",
    "/analyses/:uuid",
    "Delete a finished analysis and its results; its name can be used again",
    "delete",
  );

  app.get(
    "/analyses/download/name/:analysis_name/:metric",
    {
      schema: {
        summary: "A metric (CSV) or shapefile (zip) of a completed analysis, by analysis name",
        tags: ["analyses"],
        querystring: KeyQuery,
        params: Type.Object({ analysis_name: Type.String(), metric: Type.String() }),
        produces: ["text/csv", "application/zip"],
      },
    },
    async (request, reply) => {
      const a = await requireAnalysis(
        store,
        request.apiKey.orgId,
        request.params.analysis_name,
        "analysis_name",
      );
      return sendDownload(store, reply, a, request.params.metric);
    },
  );

  app.get(
    "/analyses/download/uuid/:uuid/:metric",
    {
      schema: {
        summary: "A metric (CSV) or shapefile (zip) of a completed analysis, by analysis uuid",
        tags: ["analyses"],
        querystring: KeyQuery,
        params: Type.Object({ uuid: Type.String(), metric: Type.String() }),
        produces: ["text/csv", "application/zip"],
      },
    },
    async (request, reply) => {
      const a = await requireAnalysis(store, request.apiKey.orgId, request.params.uuid, "uuid");
      return sendDownload(store, reply, a, request.params.metric);
    },
  );
};
