import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { setPassword } from "../../src/app/security/sessions.js";
import type { Role } from "../../src/domain/security/principal.js";
import type { Store } from "../../src/app/ports/store.js";

export const PASSWORD = "correct horse battery";

/** A user of the organization with a role and the test password. */
export async function addUserWithPassword(
  store: Store,
  orgId: string,
  email: string,
  role: Role,
): Promise<void> {
  await store.accounts.addUser(email, orgId, role);
  await setPassword(store, email, PASSWORD);
}

export interface SignedInClient {
  cookie: string;
  csrf: string;
  /** A request with the session cookie; `csrf: false` leaves the token header out. */
  request: (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    url: string,
    payload?: unknown,
    options?: { csrf?: string | false },
  ) => Promise<LightMyRequestResponse>;
}

export function signInRequest(app: FastifyInstance, email: string, password = PASSWORD, ip = "127.0.0.1") {
  return app.inject({
    method: "POST",
    url: "/auth/sign-in",
    payload: { email, password },
    remoteAddress: ip,
  });
}

export async function signedIn(app: FastifyInstance, email: string): Promise<SignedInClient> {
  const res = await signInRequest(app, email);
  if (res.statusCode !== 200) throw new Error(`sign-in of ${email} failed: ${res.body}`);
  const session = res.cookies.find((c) => c.name === "streetflow_session")!;
  const cookie = `streetflow_session=${session.value}`;
  const csrf = res.json().csrf_token as string;
  return {
    cookie,
    csrf,
    request: (method, url, payload, options = {}) => {
      const token = options.csrf === undefined ? csrf : options.csrf;
      return app.inject({
        method,
        url,
        payload: payload as Record<string, unknown> | undefined,
        headers: { cookie, ...(token === false ? {} : { "x-csrf-token": token }) },
      });
    },
  };
}
