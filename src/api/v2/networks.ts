import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { MAX_MAP_SEGMENTS, parseBbox, segmentsInBox } from "../../domain/network-map.js";
import { networkSummaries } from "../../app/networks.js";
import { KeyQuery } from "../schemas.js";
import type { NetworkInfo } from "../../shared/responses.js";

const Bbox = Type.Array(Type.Number(), {
  minItems: 4,
  maxItems: 4,
  description: "[west, south, east, north] in degrees",
});

const NetworkEntry = Type.Object({
  country: Type.String(),
  segment_count: Type.Integer(),
  imported_at: Type.String(),
  time_zone: Type.String({ description: "IANA zone whose local clock day types and day parts follow" }),
  bbox: Bbox,
  last_trip_month: Type.Union([Type.String({ pattern: "^\\d{4}-\\d{2}$" }), Type.Null()], {
    description: "YYYY-MM of the latest month with stored trips; null when the network has none",
  }),
});

const SegmentFeature = Type.Object({
  type: Type.Literal("Feature"),
  geometry: Type.Object({
    type: Type.Literal("LineString"),
    coordinates: Type.Array(Type.Array(Type.Number())),
  }),
  properties: Type.Object({
    segment_id: Type.Number(),
    road_class: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
  }),
});

const SegmentsQuery = Type.Object({
  ...KeyQuery.properties,
  bbox: Type.Optional(
    Type.String({ description: "west,south,east,north in degrees; default: the whole network" }),
  ),
});

/** Read-only views of the imported road networks, for drawing them on a map. */
export const networkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, networks } = app.deps;
  app.get(
    "/networks",
    {
      schema: {
        summary: "Imported road networks with their segment count and bounding box",
        tags: ["networks"],
        querystring: KeyQuery,
        response: {
          200: Type.Object({ status: Type.Literal("success"), networks: Type.Array(NetworkEntry) }),
        },
      },
    },
    async () => ({
      status: "success" as const,
      networks: (await networkSummaries(store.network, networks, store.tripStats)).map((n): NetworkInfo => ({
        country: n.country,
        segment_count: n.segmentCount,
        imported_at: n.importedAt,
        time_zone: n.timeZone,
        bbox: n.bbox,
        last_trip_month: n.lastTripMonth,
      })),
    }),
  );

  app.get(
    "/networks/:country/segments",
    {
      schema: {
        summary: `Road segments meeting a bounding box as GeoJSON LineStrings (at most ${MAX_MAP_SEGMENTS}, main roads first)`,
        tags: ["networks"],
        params: Type.Object({ country: Type.String({ minLength: 2, maxLength: 8 }) }),
        querystring: SegmentsQuery,
        response: {
          200: Type.Object({
            type: Type.Literal("FeatureCollection"),
            features: Type.Array(SegmentFeature),
            total: Type.Integer({ description: "Segments meeting the box" }),
            truncated: Type.Boolean({ description: `True when more than ${MAX_MAP_SEGMENTS} met the box` }),
          }),
        },
      },
    },
    async (request) => {
      const bbox = request.query.bbox === undefined ? null : parseBbox(request.query.bbox);
      const found = await segmentsInBox(networks, request.params.country.toLowerCase(), bbox);
      return { type: "FeatureCollection" as const, ...found };
    },
  );
};
