import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { DEFAULT_PLACE_LIMIT, MAX_PLACE_LIMIT, findPlaces } from "../../domain/place-search.js";
import { KeyQuery } from "../schemas.js";
import type { Place } from "../../shared/responses.js";

const PlaceEntry = Type.Object({
  name: Type.String(),
  point: Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: "[lon, lat] on the road" }),
  bbox: Type.Array(Type.Number(), { minItems: 4, maxItems: 4, description: "[west, south, east, north]" }),
  segment_count: Type.Integer(),
  length_m: Type.Integer(),
  road_class: Type.String({ description: "the most important class among its segments" }),
});

const PlacesQuery = Type.Object({
  ...KeyQuery.properties,
  q: Type.String({ description: "part of a street name; case and accents do not matter" }),
  limit: Type.Optional(
    Type.String({ description: `1 to ${MAX_PLACE_LIMIT}; default ${DEFAULT_PLACE_LIMIT}` }),
  ),
});

/** Street-name search over an imported network: the web application's offline place finder. */
export const placeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { networks } = app.deps;
  app.get(
    "/networks/:country/places",
    {
      schema: {
        summary: "Named roads of a network matching a query (offline place search)",
        description:
          "Segments with the same name form one place per stretch of road (segments within about 500 m " +
          "of each other). Ranked: exact name, name start, word start, all query words as word starts, " +
          "anywhere in the name; then main roads first, longer first, by name.",
        tags: ["networks"],
        params: Type.Object({ country: Type.String({ minLength: 2, maxLength: 8 }) }),
        querystring: PlacesQuery,
        response: {
          200: Type.Object({
            status: Type.Literal("success"),
            places: Type.Array(PlaceEntry),
            total: Type.Integer({ description: "places matching, before limit" }),
          }),
        },
      },
    },
    async (request) => {
      const { q, limit } = request.query;
      const found = await findPlaces(networks, request.params.country.toLowerCase(), q, limit);
      return {
        status: "success" as const,
        total: found.total,
        places: found.places.map((p): Place => ({
          name: p.name,
          point: p.point,
          bbox: p.bbox,
          segment_count: p.segmentCount,
          length_m: p.lengthM,
          road_class: p.roadClass,
        })),
      };
    },
  );
};
