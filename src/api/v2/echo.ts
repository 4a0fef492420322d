import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { KeyQuery } from "../schemas.js";
import { BODY_LIMITS } from "../limits.js";

export const echoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/debug/echo",
    {
      bodyLimit: BODY_LIMITS.echo,
      schema: {
        summary: "Echo a message: checks connectivity and that the key is valid",
        tags: ["debug"],
        querystring: KeyQuery,
        body: Type.Object({ message: Type.String({ maxLength: 10_000 }) }),
        response: { 200: Type.Object({ message: Type.String(), status: Type.Literal("success") }) },
      },
    },
    async (request) => ({ message: request.body.message, status: "success" as const }),
  );
};
