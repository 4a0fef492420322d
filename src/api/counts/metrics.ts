import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import {
  assertWithinQuota,
  monthPeriod,
  quotaLeft,
  unitsOf,
  usageReport,
} from "../../app/counts/metering.js";
import { parseMetricsFilters } from "../../domain/counts/metrics-request.js";
import { laterPage, type ResultPage } from "../../app/counts/results.js";
import { inlineRunner } from "../../app/heavy/tasks.js";
import type { CountsConfig } from "./config.js";
import { pagingBody, requestedPage } from "./paging.js";
import {
  answerWithData,
  JSON_TEXT,
  MetricsBody,
  MetricsResponse,
  PageQuery,
  RequestIdParams,
  WHOLE_JSON,
} from "./schemas.js";
import { BODY_LIMITS } from "../limits.js";
import { admissionOf, heavyRoute } from "../heavy.js";

/** Metrics (the one charged call), its later pages, and the caller's usage. */
export const metricsRoutes: FastifyPluginAsyncTypebox<{ config: CountsConfig }> = async (app, { config }) => {
  const { store, networks } = app.deps;
  // A provider given in the config (tests, benchmarks) cannot cross to a worker thread: it runs inline.
  const heavy = config.metricsProvider
    ? inlineRunner({ store, networks, metricsProvider: config.metricsProvider })
    : app.heavy;
  // The members after `data`, in the response schema's order.
  const metricsBody = (page: ResultPage) =>
    answerWithData(page.columns, page.dataJson, {
      data_version: page.extra.data_version as number,
      paging: pagingBody(app.prefix, "metrics", page.next),
      query_rows: page.rowCount,
      request_id: page.requestId,
      status: "done" as const,
    });

  app.post(
    "/metrics",
    {
      bodyLimit: BODY_LIMITS.geometry,
      config: heavyRoute("countsMetrics"),
      ...WHOLE_JSON,
      schema: {
        summary: "Traffic metrics per selected segment and month (charged: segments × fields)",
        tags: ["counts"],
        body: MetricsBody,
        response: { 200: MetricsResponse },
      },
    },
    async (request, reply) => {
      const filters = parseMetricsFilters(request.body);
      const key = request.apiKey;
      // An exhausted key is refused before selecting; the exact cost is checked before computing (the
      // selection and the rows are heavy work: src/app/heavy/tasks.ts, on the pool when the server has one).
      const unitsLeft = await quotaLeft(store, key, config.now());
      if (unitsLeft !== null && unitsLeft <= 0) await assertWithinQuota(store, key, 0, config.now());
      const paging = {
        orgId: key.orgId,
        pageSize: config.metricsPageSize,
        ttlMs: config.resultTtlMs,
        now: config.now().toISOString(),
      };
      const admission = admissionOf(request, key.id);
      // The task charges the call in the transaction of its pages, within the request's deadline.
      const charged = { id: key.id, orgId: key.orgId };
      const input = { ...request.body, unitsLeft, paging, key: charged };
      let result = await heavy.run("countsMetrics", input, admission);
      if (!result.page) {
        await assertWithinQuota(store, key, unitsOf(result.segments, filters.fields.length), config.now());
        // Not computed for want of units, yet the quota now allows it (raised meanwhile): compute it.
        result = await heavy.run("countsMetrics", { ...input, unitsLeft: null }, admission);
      }
      return reply.type(JSON_TEXT).send(metricsBody(result.page!) as never);
    },
  );

  app.get(
    "/metrics/paging/:request_id",
    {
      ...WHOLE_JSON,
      schema: {
        summary: "A later page of a metrics answer (not charged again)",
        tags: ["counts"],
        params: RequestIdParams,
        querystring: PageQuery,
        response: { 200: MetricsResponse },
      },
    },
    async (request, reply) => {
      const number = requestedPage(request.query.page);
      const id = request.params.request_id;
      const page = await laterPage(store, request.apiKey.orgId, "metrics", id, number, config.now());
      return reply.type(JSON_TEXT).send(metricsBody(page) as never);
    },
  );

  app.get(
    "/usage",
    {
      schema: {
        summary: "Charged metrics usage of the organization's keys in a calendar month (UTC)",
        tags: ["counts"],
        querystring: Type.Object({
          month: Type.Optional(Type.String({ pattern: "^\\d{4}-(0[1-9]|1[0-2])$", description: "YYYY-MM" })),
        }),
        response: {
          200: Type.Object({
            period: Type.Object({ start: Type.String(), end: Type.String() }),
            keys: Type.Array(
              Type.Object({
                key_id: Type.String(),
                prefix: Type.String(),
                label: Type.Union([Type.String(), Type.Null()]),
                calls: Type.Integer(),
                segments: Type.Integer(),
                fields: Type.Integer(),
                units: Type.Integer(),
                quota_units: Type.Union([Type.Integer(), Type.Null()]),
              }),
            ),
            status: Type.Literal("done"),
          }),
        },
      },
    },
    async (request) => {
      const period = monthPeriod(config.now(), request.query.month);
      return {
        period,
        keys: await usageReport(store, request.apiKey.orgId, period),
        status: "done" as const,
      };
    },
  );
};
