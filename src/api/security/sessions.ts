import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { fail } from "../../domain/errors.js";
import { resetPassword, signIn, signOut } from "../../app/security/sessions.js";
import type { SessionRecord } from "../../domain/records.js";
import { SESSION_COOKIE, assertCsrf, sessionOf } from "../auth.js";
import type { SessionInfo as SessionInfoBody } from "../../shared/responses.js";

const SessionInfo = Type.Object({
  status: Type.Literal("success"),
  user: Type.Object({ email: Type.String(), role: Type.String() }),
  organization: Type.Object({ name: Type.String() }),
  csrf_token: Type.String({ description: "send as header x-csrf-token on every state-changing request" }),
});

const Email = Type.String({ minLength: 3, maxLength: 254 });
const Password = Type.String({ minLength: 1, maxLength: 256 });

/** Sign-in, session and sign-out of the web application, and the one-time password reset (under /auth). */
export const sessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.deps;
  const { policy } = app.security;

  const info = async (session: SessionRecord): Promise<SessionInfoBody & { status: "success" }> => ({
    status: "success" as const,
    user: { email: session.email, role: (await store.security.member(session.email, session.orgId))!.role },
    organization: { name: (await store.accounts.findOrganization(session.orgId))!.name },
    csrf_token: session.csrfToken,
  });

  const setCookie = (request: FastifyRequest, reply: FastifyReply, value: string, maxAgeMs: number) =>
    reply.setCookie(SESSION_COOKIE, value, {
      path: "/",
      httpOnly: true,
      sameSite: "lax",
      // request.protocol follows X-Forwarded-Proto only when trustProxy is set.
      secure: request.protocol === "https",
      maxAge: Math.floor(maxAgeMs / 1000),
    });

  app.post(
    "/sign-in",
    {
      schema: {
        summary: "Sign in with e-mail and password; sets the session cookie",
        tags: ["web sessions"],
        body: Type.Object({ email: Email, password: Password }),
        response: { 200: SessionInfo },
      },
    },
    async (request, reply) => {
      const { email, password } = request.body;
      const { sessionId, session } = await signIn(store, policy, { email, password, ip: request.ip });
      setCookie(request, reply, sessionId, policy.sessionAbsoluteMs);
      return await info(session);
    },
  );

  app.get(
    "/session",
    { schema: { summary: "The signed-in user", tags: ["web sessions"], response: { 200: SessionInfo } } },
    async (request) => {
      const session = await sessionOf(store, policy, request);
      if (!session) throw fail("unauthorized", { reason: "not signed in" });
      return await info(session);
    },
  );

  app.post(
    "/sign-out",
    { schema: { summary: "End the session (needs x-csrf-token)", tags: ["web sessions"] } },
    async (request, reply) => {
      const session = await sessionOf(store, policy, request);
      if (session) {
        assertCsrf(request, session);
        await signOut(store, request.cookies[SESSION_COOKIE]!);
      }
      setCookie(request, reply, "", 0);
      return { status: "success" as const };
    },
  );

  app.post(
    "/reset",
    {
      schema: {
        summary: "Set a new password with a one-time reset link's token",
        tags: ["web sessions"],
        body: Type.Object({ token: Type.String({ minLength: 10, maxLength: 100 }), password: Password }),
      },
    },
    async (request) => {
      const email = await resetPassword(store, policy, request.body.token, request.body.password);
      return { status: "success" as const, email };
    },
  );
};
