import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { assertMember } from "../../app/accounts.js";
import { checkWebhookUrl } from "../../app/analyses/completion-webhook.js";
import { KeyQuery, LoginEmailBody } from "../schemas.js";
import type { Account as AccountBody } from "../../shared/responses.js";

const Webhook = Type.Object({
  status: Type.Literal("success"),
  url: Type.Union([Type.String(), Type.Null()], { description: "null when none is set" }),
});

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
      const org = (await store.accounts.findOrganization(key.orgId))!;
      const account: AccountBody = {
        organization: { name: org.name },
        key: { prefix: key.prefix, label: key.label },
        users: (await store.accounts.listMembers(key.orgId)).map((email) => ({ email })),
      };
      return { status: "success" as const, ...account };
    },
  );

  // enable_completion_email: with no mail server, a finished analysis calls this URL (docs/analyses.md).
  const webhookOf = async (orgId: string) => ({
    status: "success" as const,
    url: await store.notifications.completionWebhook(orgId),
  });
  const schema = (summary: string, body?: typeof LoginEmailBody | typeof SetWebhookBody) => ({
    summary,
    tags: ["account"],
    querystring: KeyQuery,
    ...(body ? { body } : {}),
    response: { 200: Webhook },
  });
  app.get(
    "/account/completion_webhook",
    { schema: schema("The URL called when an analysis with enable_completion_email finishes") },
    async (request) => await webhookOf(request.apiKey.orgId),
  );
  app.put(
    "/account/completion_webhook",
    { schema: { ...schema("Set the organization's completion webhook"), body: SetWebhookBody } },
    async (request) => {
      await assertMember(store, request.body.insight_login_email, request.apiKey.orgId);
      await store.notifications.setCompletionWebhook(request.apiKey.orgId, checkWebhookUrl(request.body.url));
      return await webhookOf(request.apiKey.orgId);
    },
  );
  app.delete(
    "/account/completion_webhook",
    { schema: { ...schema("Remove the organization's completion webhook"), body: LoginEmailBody } },
    async (request) => {
      await assertMember(store, request.body.insight_login_email, request.apiKey.orgId);
      await store.notifications.setCompletionWebhook(request.apiKey.orgId, null);
      return await webhookOf(request.apiKey.orgId);
    },
  );
};

const SetWebhookBody = Type.Object({
  ...LoginEmailBody.properties,
  url: Type.String({ maxLength: 2000 }),
});
