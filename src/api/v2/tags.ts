import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { guardedCreateTag, guardedTagging } from "../../app/security/guarded.js";
import { KeyQuery } from "../schemas.js";

const Success = Type.Object({ status: Type.Literal("success") });
const TagAnalysesBody = Type.Object({
  insight_login_email: Type.String({ maxLength: 254 }),
  tags: Type.Array(Type.Unknown({ description: "tag name" }), { minItems: 1, maxItems: 100 }),
  analyses: Type.Array(
    Type.Object({ name: Type.Optional(Type.String()), uuid: Type.Optional(Type.String()) }),
    { minItems: 1, maxItems: 1000 },
  ),
});
const Tag = Type.Object({
  tag_name: Type.String(),
  created_by: Type.String({ description: "login that created the tag" }),
  created_date: Type.String({ description: "ISO time" }),
  analysis_num: Type.Integer({ description: "analyses (not deleted) carrying the tag" }),
});

/** The organization's analysis tags (the vendor interface's tag endpoints). */
export const tagRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.deps;

  app.post(
    "/analyses/tags",
    {
      schema: {
        summary: "Create a tag of the organization",
        tags: ["tags"],
        querystring: KeyQuery,
        body: Type.Object({ insight_login_email: Type.String({ maxLength: 254 }), tag_name: Type.Unknown() }),
        response: { 201: Type.Object({ ...Success.properties, tag_name: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { insight_login_email, tag_name } = request.body;
      const name = await guardedCreateTag(store, request.principal, insight_login_email, tag_name);
      return reply.status(201).send({ status: "success" as const, tag_name: name });
    },
  );

  app.get(
    "/tags",
    {
      schema: {
        summary: "The organization's tags",
        tags: ["tags"],
        querystring: KeyQuery,
        response: { 200: Type.Object({ tags: Type.Array(Tag), status: Type.Literal("success") }) },
      },
    },
    async (request) => ({
      tags: (await store.tags.list(request.apiKey.orgId)).map((t) => ({
        tag_name: t.name,
        created_by: t.createdBy,
        created_date: t.createdAt,
        analysis_num: t.analysisCount,
      })),
      status: "success" as const,
    }),
  );

  app.post(
    "/tags/tag_analyses",
    {
      schema: {
        summary: "Add tags to analyses (tags the organization lacks are created)",
        tags: ["tags"],
        querystring: KeyQuery,
        body: TagAnalysesBody,
        response: { 200: Success },
      },
    },
    async (request) => {
      await guardedTagging(store, request.principal, "tag", request.body);
      return { status: "success" as const };
    },
  );

  app.post(
    "/tags/remove_analyses_tag",
    {
      schema: {
        summary: "Remove tags from analyses",
        tags: ["tags"],
        querystring: KeyQuery,
        body: TagAnalysesBody,
        response: { 200: Success },
      },
    },
    async (request) => {
      await guardedTagging(store, request.principal, "untag", request.body);
      return { status: "success" as const };
    },
  );
};
