import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { KeyQuery } from "../schemas.js";

const Account = Type.Object({
  status: Type.Literal("success"),
  organization: Type.Object({ name: Type.String() }),
  key: Type.Object({
    prefix: Type.String({ description: "first characters of the key, as `streetflow key list` shows them" }),
    label: Type.Union([Type.String(), Type.Null()]),
  }),
  users: Type.Array(Type.Object({ email: Type.String() }), {
    description: "the organization's users: the e-mails accepted as insight_login_email",
  }),
});

/**
 * Who the key belongs to. The web application signs in with it and offers the organization's users for
 * `insight_login_email`, which creating zone sets and analyses requires.
 */
export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.deps;
  app.get(
    "/account",
    {
      schema: {
        summary: "The organization, key and users behind the API key",
        tags: ["account"],
        querystring: KeyQuery,
        response: { 200: Account },
      },
    },
    async (request) => {
      const key = request.apiKey;
      const org = store.accounts.findOrganization(key.orgId)!;
      return {
        status: "success" as const,
        organization: { name: org.name },
        key: { prefix: key.prefix, label: key.label },
        users: store.accounts.listMembers(key.orgId).map((email) => ({ email })),
      };
    },
  );
};
