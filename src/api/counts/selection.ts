import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { laterPage, type ResultPage } from "../../app/counts/results.js";
import type { CountsConfig } from "./config.js";
import { pagingBody, requestedPage } from "./paging.js";
import {
  answerWithData,
  GeometryResponse,
  JSON_TEXT,
  PageQuery,
  RequestIdParams,
  SelectionBody,
  WHOLE_JSON,
} from "./schemas.js";
import { BODY_LIMITS } from "../limits.js";
import { admissionOf, heavyRoute } from "../heavy.js";

/** Geometry lookup, its later pages, and the segment count. */
export const selectionRoutes: FastifyPluginAsyncTypebox<{ config: CountsConfig }> = async (
  app,
  { config },
) => {
  const { store } = app.deps;
  const prefix = app.prefix;
  // The first page and the later ones answer alike.
  const geometryBody = (page: ResultPage) =>
    answerWithData(page.columns, page.dataJson, {
      paging: pagingBody(prefix, "geometry", page.next),
      query_rows: page.rowCount,
      request_id: page.requestId,
      status: "done" as const,
    });

  app.post(
    "/geometry",
    {
      bodyLimit: BODY_LIMITS.geometry,
      config: heavyRoute("countsGeometry"),
      ...WHOLE_JSON,
      schema: {
        summary: "Segment ids and line geometry of the selected segments",
        tags: ["counts"],
        body: SelectionBody,
        response: { 200: GeometryResponse },
      },
    },
    async (request, reply) => {
      const paging = {
        orgId: request.apiKey.orgId,
        pageSize: config.geometryPageSize,
        ttlMs: config.resultTtlMs,
        now: config.now().toISOString(),
      };
      const selection = request.body;
      const page = await app.heavy.run(
        "countsGeometry",
        { selection, paging },
        admissionOf(request, request.apiKey.id),
      );
      return reply.type(JSON_TEXT).send(geometryBody(page) as never);
    },
  );

  app.get(
    "/geometry/paging/:request_id",
    {
      ...WHOLE_JSON,
      schema: {
        summary: "A later page of a geometry answer",
        tags: ["counts"],
        params: RequestIdParams,
        querystring: PageQuery,
        response: { 200: GeometryResponse },
      },
    },
    async (request, reply) => {
      const { request_id: id } = request.params;
      const number = requestedPage(request.query.page);
      const page = await laterPage(store, request.apiKey.orgId, "geometry", id, number, config.now());
      return reply.type(JSON_TEXT).send(geometryBody(page) as never);
    },
  );

  app.post(
    "/segmentcount",
    {
      bodyLimit: BODY_LIMITS.geometry,
      config: heavyRoute("countsSegmentCount"),
      schema: {
        summary: "The most segments a metrics call with this selection can return",
        tags: ["counts"],
        body: SelectionBody,
        response: {
          200: Type.Object({
            request_id: Type.String(),
            segment_count: Type.Integer(),
            status: Type.Literal("done"),
          }),
        },
      },
    },
    async (request) => {
      const count = await app.heavy.run(
        "countsSegmentCount",
        request.body,
        admissionOf(request, request.apiKey.id),
      );
      return { request_id: crypto.randomUUID(), segment_count: count, status: "done" as const };
    },
  );
};
