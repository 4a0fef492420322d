import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { parseOsmIdSearch, type OsmIdSearchRequest } from "../../domain/osm-id-search.js";
import { KeyQuery } from "../schemas.js";
import { BODY_LIMITS } from "../limits.js";
import { admissionOf, heavyRoute } from "../heavy.js";

/** [lon, lat] with an optional altitude; ranges are checked by the domain so the message names the position. */
const Position = Type.Array(Type.Number(), { minItems: 2, maxItems: 3 });

const PolygonGeometry = Type.Object({
  type: Type.String({ description: '"polygon" (any case)' }),
  coordinates: Type.Array(Type.Array(Position, { minItems: 4 }), {
    minItems: 1,
    description: "Outer ring, then holes; each ring closed",
  }),
});

const RadiusSelector = Type.Object({
  point: Type.Object({
    type: Type.String({ description: '"point" (any case)' }),
    coordinates: Position,
  }),
  buffer: Type.Number({ description: "Radius in `unit`; measured to the segment line" }),
  unit: Type.String({ description: "mi, mile, miles, km, m or ft" }),
  geom_mode: Type.Optional(Type.String({ description: 'Only "within"' })),
});

const SearchBody = Type.Object({
  geometry: Type.Object(
    { polygon: Type.Optional(PolygonGeometry), radius: Type.Optional(RadiusSelector) },
    { additionalProperties: false, description: "Exactly one of polygon or radius" },
  ),
  country: Type.Optional(Type.String({ minLength: 2, maxLength: 3, description: "Default: every network" })),
  roadway_classification: Type.Optional(
    Type.Object({ include: Type.Array(Type.String(), { maxItems: 30 }) }),
  ),
});

const COLUMNS = [
  "osm_id",
  "road_classification",
  "osm_segment_count",
  "name",
  "length_m",
  "country",
] as const;

const SearchResponse = Type.Object({
  status: Type.Literal("success"),
  columns: Type.Array(Type.String()),
  data: Type.Array(Type.Array(Type.Union([Type.Number(), Type.String(), Type.Null()]))),
});

/** Clients spell GeoJSON keys in varying case ("Polygon", "Coordinates"); the schema sees them lowercased. */
function lowercaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(lowercaseKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), lowercaseKeys(v)]));
}

export const osmIdRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/osm_ids/search",
    {
      bodyLimit: BODY_LIMITS.geometry,
      config: heavyRoute("osmIdSearch"),
      schema: {
        summary:
          "OSM ways whose road segments meet a polygon or lie within a radius (to build osm_ids zone sets)",
        tags: ["zones"],
        querystring: KeyQuery,
        body: SearchBody,
        response: { 200: SearchResponse },
      },
      preValidation: async (request) => {
        const body = request.body as { geometry?: unknown } | null;
        if (body && typeof body === "object" && body.geometry !== undefined)
          body.geometry = lowercaseKeys(body.geometry);
      },
    },
    async (request) => {
      const search = parseOsmIdSearch(request.body as OsmIdSearchRequest);
      const rows = await app.heavy.run("osmIdSearch", search, admissionOf(request, request.principal?.keyId));
      return {
        status: "success" as const,
        columns: [...COLUMNS],
        data: rows.map((r) => [r.osmId, r.roadClass, r.segmentCount, r.name, r.lengthM, r.country]),
      };
    },
  );
};
