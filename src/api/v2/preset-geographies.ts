import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { listPresetGeographies, resolveGeographyType } from "../../domain/preset-geographies.js";
import { KeyQuery } from "../schemas.js";

const Country = Type.String({ minLength: 2, maxLength: 8 });

const GeographyEntry = Type.Object({
  geography_type: Type.String({ description: "`admin_N` (OSM admin_level N) or `zip` (postal codes)" }),
  areas: Type.Integer(),
  description: Type.String(),
});

const AreaFeature = Type.Object({
  type: Type.Literal("Feature"),
  geometry: Type.Object({
    type: Type.Union([Type.Literal("Polygon"), Type.Literal("MultiPolygon")]),
    coordinates: Type.Array(Type.Any()),
  }),
  properties: Type.Object({
    area_id: Type.String({ description: "The id analysis results give the area" }),
    osm_id: Type.Integer({ description: "OSM relation id" }),
    name: Type.Union([Type.String(), Type.Null()]),
    geography_type: Type.String(),
  }),
});

/** The boundaries imported with each network, usable as destinations of OD_Preset_Geography. */
export const presetGeographyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.deps;
  const imported = async () => (await store.network.countries()).map((c) => c.country);

  app.get(
    "/preset_geographies/:country",
    {
      schema: {
        summary: "Preset geography types of a country (boundaries imported with its network)",
        tags: ["preset geographies"],
        params: Type.Object({ country: Country }),
        querystring: KeyQuery,
        response: {
          200: Type.Object({
            status: Type.Literal("success"),
            country: Type.String(),
            geography_types: Type.Array(GeographyEntry),
          }),
        },
      },
    },
    async (request) => ({
      status: "success" as const,
      country: request.params.country.toLowerCase(),
      geography_types: (
        await listPresetGeographies(store.presetAreas, await imported(), request.params.country)
      ).map((t) => ({ geography_type: t.geographyType, areas: t.areas, description: t.description })),
    }),
  );

  app.get(
    "/preset_geographies/:country/:geography_type",
    {
      schema: {
        summary: "The areas of one preset geography as GeoJSON polygons",
        tags: ["preset geographies"],
        params: Type.Object({ country: Country, geography_type: Type.String({ maxLength: 32 }) }),
        querystring: KeyQuery,
        response: {
          200: Type.Object({ type: Type.Literal("FeatureCollection"), features: Type.Array(AreaFeature) }),
        },
      },
    },
    async (request) => {
      const { country } = request.params;
      await listPresetGeographies(store.presetAreas, await imported(), country);
      const code = country.toLowerCase();
      const type = await resolveGeographyType(store.presetAreas, code, request.params.geography_type);
      return {
        type: "FeatureCollection" as const,
        features: (await store.presetAreas.list(code, type)).map((a) => ({
          type: "Feature" as const,
          geometry: a.geometry as { type: "Polygon" | "MultiPolygon"; coordinates: unknown[] },
          properties: { area_id: a.areaId, osm_id: a.osmId, name: a.name, geography_type: a.geographyType },
        })),
      };
    },
  );
};
