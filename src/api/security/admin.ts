import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import {
  auditLog,
  createKey,
  inviteUser,
  listKeys,
  listUsers,
  monthlyUsage,
  passwordResetLink,
  revokeKey,
  setUserDisabled,
  setUserRole,
  updateKey,
} from "../../app/security/admin.js";
import { ROLES } from "../../domain/security/principal.js";
import { fail } from "../../domain/errors.js";
import { anyApiKey, requireApiKey } from "../auth.js";

const Role = Type.Union(ROLES.map((r) => Type.Literal(r)));
const EmailParams = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }) });
const KeyParams = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 64 }) });
const Limit = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()]);
const tags = ["admin"];
/** Query strings are not coerced (ajv coerceTypes is off): whole numbers arrive as digits. */
const WholeNumber = Type.String({ pattern: "^[0-9]{1,4}$" });

function numberIn(value: string | undefined, fallback: number, max: number, field: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (n < 1 || n > max)
    throw fail("invalid_request", { reason: `${field} must be between 1 and ${max}` }, field);
  return n;
}

/** The admin page's interface (under /admin/api): every route checks the admin role in the use case. */
export const adminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.deps;
  const { policy } = app.security;
  app.addHook("onRequest", requireApiKey(store, anyApiKey, policy));
  /** Reset links are fragments of the page's own address: the token never reaches a server log. */
  const resetLink = (origin: string, token: string) => `${origin}/#reset=${token}`;
  const originOf = (request: { protocol: string; host: string }) => `${request.protocol}://${request.host}`;

  app.get("/users", { schema: { summary: "The organization's users", tags } }, async (request) => ({
    status: "success" as const,
    users: await listUsers(store, request.principal),
  }));

  app.post(
    "/users",
    {
      schema: {
        summary: "Invite a user: answers a one-time link with which they set their password",
        tags,
        body: Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }), role: Role }),
      },
    },
    async (request, reply) => {
      const { user, resetToken } = await inviteUser(
        store,
        policy,
        request.principal,
        request.body.email,
        request.body.role,
      );
      return reply
        .status(201)
        .send({ status: "success" as const, user, reset_link: resetLink(originOf(request), resetToken) });
    },
  );

  app.patch(
    "/users/:email",
    {
      schema: {
        summary: "Change a user's role or disable / enable them",
        tags,
        params: EmailParams,
        body: Type.Object({ role: Type.Optional(Role), disabled: Type.Optional(Type.Boolean()) }),
      },
    },
    async (request) => {
      const { email } = request.params;
      let user = undefined;
      if (request.body.role) user = await setUserRole(store, request.principal, email, request.body.role);
      if (request.body.disabled !== undefined)
        user = await setUserDisabled(store, request.principal, email, request.body.disabled);
      return {
        status: "success" as const,
        user: user ?? (await listUsers(store, request.principal)).find((u) => u.email === email),
      };
    },
  );

  app.post(
    "/users/:email/reset-link",
    { schema: { summary: "A one-time password reset link to pass on", tags, params: EmailParams } },
    async (request) => {
      const token = await passwordResetLink(store, policy, request.principal, request.params.email);
      return { status: "success" as const, reset_link: resetLink(originOf(request), token) };
    },
  );

  app.get("/keys", { schema: { summary: "The organization's API keys", tags } }, async (request) => ({
    status: "success" as const,
    keys: await listKeys(store, request.principal),
  }));

  app.post(
    "/keys",
    {
      schema: {
        summary: "Create an API key; the key is in this answer only",
        tags,
        body: Type.Object({
          label: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
        }),
      },
    },
    async (request, reply) => {
      const created = await createKey(store, request.principal, request.body.label?.trim() || null);
      return reply.status(201).send({ status: "success" as const, key: created.key, api_key: created.view });
    },
  );

  app.patch(
    "/keys/:key_id",
    {
      schema: {
        summary: "Change a key's label, monthly counts quota (units) or rate limit (requests per minute)",
        tags,
        params: KeyParams,
        body: Type.Object({
          label: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
          quota_units: Type.Optional(Limit),
          rate_limit_per_minute: Type.Optional(Limit),
        }),
      },
    },
    async (request) => ({
      status: "success" as const,
      api_key: await updateKey(store, request.principal, request.params.key_id, request.body),
    }),
  );

  app.delete(
    "/keys/:key_id",
    { schema: { summary: "Revoke an API key", tags, params: KeyParams } },
    async (request) => ({
      status: "success" as const,
      api_key: await revokeKey(store, request.principal, request.params.key_id),
    }),
  );

  app.get(
    "/usage",
    {
      schema: {
        summary: "Metered counts usage per key and month",
        tags,
        querystring: Type.Object({ months: Type.Optional(WholeNumber) }),
      },
    },
    async (request) => ({
      status: "success" as const,
      usage: await monthlyUsage(store, request.principal, numberIn(request.query.months, 6, 36, "months")),
    }),
  );

  app.get(
    "/audit",
    {
      schema: {
        summary: "Who created, changed, deleted or cancelled what, newest first",
        tags,
        querystring: Type.Object({ limit: Type.Optional(WholeNumber) }),
      },
    },
    async (request) => ({
      status: "success" as const,
      entries: await auditLog(store, request.principal, numberIn(request.query.limit, 200, 1000, "limit")),
    }),
  );
};
