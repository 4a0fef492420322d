import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { requireCountsMode } from "../../domain/counts/selection.js";
import { fail } from "../../domain/errors.js";
import { countsApiKey, rejectRepeatedQuery, requireApiKey } from "../auth.js";
import { DEFAULT_COUNTS_CONFIG } from "./config.js";
import { metricsRoutes } from "./metrics.js";
import { selectionRoutes } from "./selection.js";

/** The road-segment counts interface v1 (mounted under /counts/v1). */
export const countsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.deps;
  const config = { ...DEFAULT_COUNTS_CONFIG, ...app.deps.counts };
  app.addHook("onRequest", rejectRepeatedQuery);
  app.addHook("onRequest", requireApiKey(store, countsApiKey, app.security.policy));

  app.get(
    "/date_ranges/:country/:travel_mode",
    {
      schema: {
        summary: "Months and years with data for a country and travel mode",
        tags: ["counts"],
        params: Type.Object({
          country: Type.String({ minLength: 2, maxLength: 8 }),
          travel_mode: Type.String({ description: "vehicle | truck | bike | ped" }),
        }),
        response: {
          200: Type.Object({
            months: Type.Array(Type.Object({ month: Type.Integer(), year: Type.Integer() })),
            years: Type.Array(Type.Object({ year: Type.Integer() })),
            status: Type.Literal("done"),
          }),
        },
      },
    },
    async (request) => {
      const mode = requireCountsMode(request.params.travel_mode, "travel_mode");
      const country = request.params.country.toLowerCase();
      if (!(await store.network.countries()).some((c) => c.country === country))
        throw fail("unknown_country", { country: request.params.country }, "country");
      const months = await store.tripStats.monthsWithTrips(country, mode.vehicleClasses);
      const years = [...new Set(months.map((m) => m.year))].map((year) => ({ year }));
      return {
        months: months.map((m) => ({ month: m.month, year: m.year })),
        years,
        status: "done" as const,
      };
    },
  );

  await app.register(selectionRoutes, { config });
  await app.register(metricsRoutes, { config });
};
