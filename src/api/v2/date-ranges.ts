import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { dataPeriods } from "../../domain/date-ranges.js";
import { fail } from "../../domain/errors.js";
import { requireTravelMode, TRAVEL_MODES } from "../../domain/travel-modes.js";
import { KeyQuery } from "../schemas.js";

const Range = Type.Object({ start_date: Type.String(), end_date: Type.String() });

export const dateRangeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.deps;
  app.get(
    "/date_ranges/:country/:travel_mode",
    {
      schema: {
        summary: "Data periods (whole months with stored trips) for a country and travel mode",
        tags: ["data periods"],
        params: Type.Object({
          country: Type.String({ minLength: 2, maxLength: 8, description: "country code, e.g. mc" }),
          travel_mode: Type.String({ description: `one of ${Object.keys(TRAVEL_MODES).join(", ")}` }),
        }),
        querystring: KeyQuery,
        response: {
          200: Type.Object({
            date_ranges: Type.Object({ supports: Type.Array(Range), default: Type.Array(Range) }),
          }),
        },
      },
    },
    async (request) => {
      const country = request.params.country.toLowerCase();
      if (!(await store.network.countries()).some((c) => c.country === country))
        throw fail("unknown_country", { country: request.params.country }, "country");
      const mode = requireTravelMode(request.params.travel_mode);
      return {
        date_ranges: dataPeriods(
          await store.tripStats.monthsWithTrips(country, mode.vehicleClasses, mode.sources),
        ),
      };
    },
  );
};
