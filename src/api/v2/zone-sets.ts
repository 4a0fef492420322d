import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { requireZoneSet } from "../../app/zone-sets.js";
import { guardedCreateZoneSet, guardedDeleteZoneSet } from "../../app/security/guarded.js";
import type { StoredZoneSet } from "../../domain/records.js";
import { KeyQuery, SuccessCreated } from "../schemas.js";
import { BODY_LIMITS } from "../limits.js";
import type { ZoneSetSummary as ZoneSetSummaryBody } from "../../shared/responses.js";

/**
 * The known members are typed; `zones` and `osm_ids` stay loose so the domain
 * validator can name the exact zone and property of every problem.
 */
const ZoneSetBody = Type.Object({
  zones: Type.Optional(
    Type.Unknown({ description: "GeoJSON FeatureCollection of zones (or an array of Features)" }),
  ),
  osm_ids: Type.Optional(Type.Unknown({ description: "OSM way ids; each becomes one line zone" })),
  zone_set_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  insight_login_email: Type.String({ minLength: 1, maxLength: 254 }),
  with_calibration: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  geom_type: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

const ZoneSetSummary = Type.Object({
  name: Type.String(),
  uuid: Type.String(),
  geom_type: Type.String(),
  with_calibration: Type.Boolean(),
  zone_count: Type.Integer(),
  created_at: Type.String(),
});

const ZoneSetListEntry = Type.Object({
  ...ZoneSetSummary.properties,
  bbox: Type.Union([Type.Array(Type.Number(), { minItems: 4, maxItems: 4 }), Type.Null()], {
    description:
      "[west, south, east, north] of all zones (a Streetflow addition: the page lists a network's sets)",
  }),
});

const ZoneSetParams = Type.Object({ name_or_uuid: Type.String({ minLength: 1, maxLength: 200 }) });

const summaryOf = (
  z: Omit<StoredZoneSet, "featureCollection">,
): ZoneSetSummaryBody & { with_calibration: boolean } => ({
  name: z.name,
  uuid: z.uuid,
  geom_type: z.geomType,
  with_calibration: z.withCalibration,
  zone_count: z.zoneCount,
  created_at: z.createdAt,
});

export const zoneSetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, networks } = app.deps;

  app.post(
    "/zone_sets",
    {
      bodyLimit: BODY_LIMITS.zoneSet,
      schema: {
        summary: "Create a zone set from GeoJSON zones or OSM way ids",
        tags: ["zone sets"],
        querystring: KeyQuery,
        body: ZoneSetBody,
        response: { 201: SuccessCreated },
      },
    },
    async (request, reply) => {
      const created = await guardedCreateZoneSet(request.principal, request.body, { store, networks });
      return reply.status(201).send({ name: created.name, status: "success" as const, uuid: created.uuid });
    },
  );

  app.get(
    "/zone_sets",
    {
      schema: {
        summary: "List the organization's zone sets",
        tags: ["zone sets"],
        querystring: KeyQuery,
        response: {
          200: Type.Object({ status: Type.Literal("success"), zone_sets: Type.Array(ZoneSetListEntry) }),
        },
      },
    },
    async (request) => ({
      status: "success" as const,
      zone_sets: (await store.zoneSets.list(request.apiKey.orgId)).map((z) => ({
        ...summaryOf(z),
        bbox: z.bbox,
      })),
    }),
  );

  app.get(
    "/zone_sets/:name_or_uuid",
    {
      schema: {
        summary:
          "A zone set as a GeoJSON FeatureCollection (name, uuid, geom_type, with_calibration as members)",
        tags: ["zone sets"],
        querystring: KeyQuery,
        params: ZoneSetParams,
      },
    },
    async (request) => {
      const set = await requireZoneSet(store, request.apiKey.orgId, request.params.name_or_uuid);
      const { features } = set.featureCollection;
      return { type: "FeatureCollection", ...summaryOf(set), features };
    },
  );

  app.delete(
    "/zone_sets/:name_or_uuid",
    {
      schema: {
        summary: "Delete a zone set (409 while an analysis that is not deleted uses it)",
        tags: ["zone sets"],
        querystring: KeyQuery,
        params: ZoneSetParams,
        response: { 200: SuccessCreated },
      },
    },
    async (request) => {
      const set = await guardedDeleteZoneSet(store, request.principal, request.params.name_or_uuid);
      return { status: "success" as const, name: set.name, uuid: set.uuid };
    },
  );
};
