import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.js";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { storeNetworks } from "../../src/app/networks.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeOrg, makeTestApp, type TestContext } from "../helpers/app.js";
import { odRequest, seedAnalysisData } from "../helpers/analyses.js";
import { boxFeature } from "../helpers/zones.js";
import { PASSWORD, addUserWithPassword, signInRequest, signedIn } from "../helpers/security.js";

const zoneSetBody = (name: string, email: string) => ({
  zone_set_name: name,
  insight_login_email: email,
  zones: { type: "FeatureCollection", features: [boxFeature("A", 1, [7.41, 43.72, 7.42, 43.73])] },
});

describe("web sessions, CSRF and roles over HTTP", () => {
  let ctx: TestContext;
  const admin = "admin@orga.example";
  const analyst = "analyst@orga.example";
  const viewer = "viewer@orga.example";

  before(async () => {
    ctx = await makeTestApp();
    await addUserWithPassword(ctx.store, ctx.orgA.orgId, admin, "admin");
    await addUserWithPassword(ctx.store, ctx.orgA.orgId, analyst, "analyst");
    await addUserWithPassword(ctx.store, ctx.orgA.orgId, viewer, "viewer");
  });
  after(async () => {
    await ctx.app.close();
    await ctx.store.close();
  });

  it("signs in with an HttpOnly, SameSite=Lax session cookie and answers the user and a CSRF token", async () => {
    const res = await signInRequest(ctx.app, analyst.toUpperCase());
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body.user, { email: analyst, role: "analyst" });
    assert.equal(body.organization.name, "Org A");
    assert.match(body.csrf_token, /^[\w-]{40,}$/);
    const cookie = res.cookies.find((c) => c.name === "streetflow_session")!;
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, "Lax");
    assert.equal(cookie.secure, undefined, "plain HTTP without a trusted proxy: not Secure");
  });

  it("refuses a wrong password and an unknown user alike (401)", async () => {
    for (const [email, password] of [
      [analyst, "wrong password!"],
      ["nobody@orga.example", PASSWORD],
    ]) {
      const res = await signInRequest(ctx.app, email, password, "10.0.0.9");
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error.code, "unauthorized");
    }
  });

  it("refuses a cookie-authenticated state change without the CSRF token, or with another session's", async () => {
    const client = await signedIn(ctx.app, analyst);
    const other = await signedIn(ctx.app, admin);
    const url = "/api/v2/zone_sets";
    const missing = await client.request("POST", url, zoneSetBody("No token", analyst), { csrf: false });
    assert.equal(missing.statusCode, 403);
    assert.equal(missing.json().error.code, "csrf_token_invalid");
    const foreign = await client.request("POST", url, zoneSetBody("Wrong token", analyst), {
      csrf: other.csrf,
    });
    assert.equal(foreign.statusCode, 403);
    assert.equal((await ctx.store.zoneSets.list(ctx.orgA.orgId)).length, 0, "nothing was created");
    const ok = await client.request("POST", url, zoneSetBody("With token", analyst));
    assert.equal(ok.statusCode, 201, ok.body);
    // Sign-out is a state change too.
    const out = await client.request("POST", "/auth/sign-out", undefined, { csrf: false });
    assert.equal(out.statusCode, 403);
  });

  it("keeps API keys working as before: no cookie, no CSRF token", async () => {
    const res = await ctx.app.inject({
      method: "POST",
      url: `/api/v2/zone_sets?key=${ctx.orgA.key}`,
      payload: zoneSetBody("By key", ctx.orgA.email),
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  it("lets a viewer read but not create, delete or analyse (403)", async () => {
    const client = await signedIn(ctx.app, viewer);
    assert.equal((await client.request("GET", "/api/v2/zone_sets")).statusCode, 200);
    const create = await client.request("POST", "/api/v2/zone_sets", zoneSetBody("Viewer set", viewer));
    assert.equal(create.statusCode, 403);
    assert.equal(create.json().error.code, "forbidden");
    const del = await client.request("DELETE", "/api/v2/zone_sets/With%20token");
    assert.equal(del.statusCode, 403);
    const analysis = await client.request("POST", "/api/v2/analyses", odRequest(viewer));
    assert.equal(analysis.statusCode, 403);
    assert.equal((await client.request("GET", "/admin/api/users")).statusCode, 403);
  });

  it("lets an analyst work with zone sets but refuses the admin interface", async () => {
    const client = await signedIn(ctx.app, analyst);
    const del = await client.request("DELETE", "/api/v2/zone_sets/With%20token");
    assert.equal(del.statusCode, 200, del.body);
    for (const [method, url] of [
      ["GET", "/admin/api/users"],
      ["GET", "/admin/api/keys"],
      ["POST", "/admin/api/keys"],
      ["GET", "/admin/api/usage"],
      ["GET", "/admin/api/audit"],
    ] as const) {
      const res = await client.request(method, url, method === "POST" ? { label: "x" } : undefined);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
    }
  });

  it("refuses the admin interface to API keys", async () => {
    const res = await ctx.app.inject({
      method: "GET",
      url: "/admin/api/users",
      headers: { "x-stl-key": ctx.orgA.key },
    });
    assert.equal(res.statusCode, 403);
  });

  it("lets an admin manage users and keys, and records who did what in the audit log", async () => {
    const client = await signedIn(ctx.app, admin);
    const users = (await client.request("GET", "/admin/api/users")).json().users;
    assert.deepEqual(
      users.map((u: { email: string; role: string }) => `${u.email}:${u.role}`),
      [`${admin}:admin`, `${analyst}:analyst`, `planner@orga.example:analyst`, `${viewer}:viewer`],
    );
    const created = await client.request("POST", "/admin/api/keys", { label: "traffic board" });
    assert.equal(created.statusCode, 201);
    const { key, api_key } = created.json();
    assert.match(key, /^sf_/);
    assert.equal(key.slice(0, 10), api_key.prefix);
    const limited = await client.request("PATCH", `/admin/api/keys/${api_key.id}`, {
      quota_units: 5000,
      rate_limit_per_minute: 30,
    });
    assert.deepEqual(
      [limited.json().api_key.quota_units, limited.json().api_key.rate_limit_per_minute],
      [5000, 30],
    );
    const listed = (await client.request("GET", "/admin/api/keys")).json().keys;
    assert.ok(listed.every((k: Record<string, unknown>) => !("key" in k) && !("key_hash" in k)));
    assert.equal(
      (await client.request("DELETE", `/admin/api/keys/${api_key.id}`)).json().api_key.revoked,
      true,
    );
    const refused = await ctx.app.inject({
      method: "GET",
      url: "/api/v2/zone_sets",
      headers: { "x-stl-key": key },
    });
    assert.equal(refused.statusCode, 401, "a revoked key no longer works");
    const usage = await client.request("GET", "/admin/api/usage?months=12");
    assert.equal(usage.statusCode, 200, usage.body);
    assert.equal((await client.request("GET", "/admin/api/usage?months=99")).statusCode, 400);
    const entries = (await client.request("GET", "/admin/api/audit?limit=100")).json().entries;
    const actions = entries.map((e: { actor: string; action: string }) => `${e.actor} ${e.action}`);
    for (const expected of [
      `${admin} key.create`,
      `${admin} key.update`,
      `${admin} key.revoke`,
      `${analyst} zone_set.create`,
      `${analyst} zone_set.delete`,
      `key ${ctx.orgA.key.slice(0, 10)} zone_set.create`,
    ])
      assert.ok(actions.includes(expected), `audit log has "${expected}": ${actions.join("; ")}`);
  });

  it("invites a user with a one-time link; the link sets the password once", async () => {
    const client = await signedIn(ctx.app, admin);
    const invited = await client.request("POST", "/admin/api/users", {
      email: "new@orga.example",
      role: "viewer",
    });
    assert.equal(invited.statusCode, 201);
    const link: string = invited.json().reset_link;
    const token = /#reset=([\w-]+)$/.exec(link)![1];
    const reset = (password: string) =>
      ctx.app.inject({ method: "POST", url: "/auth/reset", payload: { token, password } });
    assert.equal((await reset("short")).statusCode, 400);
    assert.equal((await reset("a new long password")).statusCode, 200);
    assert.equal((await reset("another long password")).json().error.code, "invalid_reset_link");
    const res = await signInRequest(ctx.app, "new@orga.example", "a new long password");
    assert.equal(res.json().user.role, "viewer");
  });

  it("ends a disabled user's sessions at once and refuses a signed-out session", async () => {
    const user = await signedIn(ctx.app, viewer);
    const adminClient = await signedIn(ctx.app, admin);
    await adminClient.request("PATCH", `/admin/api/users/${viewer}`, { disabled: true });
    assert.equal((await user.request("GET", "/api/v2/zone_sets")).statusCode, 401);
    assert.equal((await signInRequest(ctx.app, viewer)).statusCode, 403);
    await adminClient.request("PATCH", `/admin/api/users/${viewer}`, { disabled: false });

    const again = await signedIn(ctx.app, viewer);
    assert.equal((await again.request("POST", "/auth/sign-out")).statusCode, 200);
    assert.equal((await again.request("GET", "/api/v2/zone_sets")).statusCode, 401);
    assert.equal((await again.request("GET", "/auth/session")).statusCode, 401);
  });

  it("keeps an admin from disabling or demoting themselves", async () => {
    const client = await signedIn(ctx.app, admin);
    const res = await client.request("PATCH", `/admin/api/users/${admin}`, { role: "viewer" });
    assert.equal(res.statusCode, 409);
  });
});

describe("session expiry, sign-in lockout and Secure cookies behind a proxy", () => {
  let now = Date.parse("2026-01-05T10:00:00Z");
  const advance = (ms: number) => (now += ms);
  const store = new SqliteStore(":memory:");
  let app: FastifyInstance;
  const email = "planner@orga.example";

  before(async () => {
    const org = await makeOrg(store, "Org A");
    await addUserWithPassword(store, org.orgId, "other@orga.example", "analyst");
    await store.security.setRole(email, org.orgId, "analyst");
    await addUserWithPassword(store, org.orgId, email, "analyst");
    app = await buildApp({
      store,
      networks: new NetworkRegistry(() => []),
      security: {
        trustProxy: true,
        policy: {
          clock: () => new Date(now),
          sessionIdleMs: 10 * 60_000,
          sessionAbsoluteMs: 60 * 60_000,
          accountLockout: {
            freeFailures: 2,
            firstDelayMs: 10_000,
            maxDelayMs: 60_000,
            lockAfter: 5,
            lockMs: 15 * 60_000,
            windowMs: 60 * 60_000,
          },
          ipLockout: {
            freeFailures: 3,
            firstDelayMs: 10_000,
            maxDelayMs: 60_000,
            lockAfter: 6,
            lockMs: 15 * 60_000,
            windowMs: 60 * 60_000,
          },
        },
      },
    });
  });
  after(async () => {
    await app.close();
    await store.close();
  });

  it("ends a session after the idle time, and after the absolute time however busy", async () => {
    const client = await signedIn(app, email);
    advance(9 * 60_000);
    assert.equal((await client.request("GET", "/auth/session")).statusCode, 200);
    advance(11 * 60_000);
    assert.equal((await client.request("GET", "/auth/session")).statusCode, 401, "idle for 11 minutes");

    const busy = await signedIn(app, email);
    for (let i = 0; i < 6; i++) {
      advance(9 * 60_000);
      assert.equal((await busy.request("GET", "/auth/session")).statusCode, 200, `${(i + 1) * 9} minutes in`);
    }
    advance(9 * 60_000);
    assert.equal((await busy.request("GET", "/auth/session")).statusCode, 401, "over an hour after sign-in");
  });

  it("slows down and then locks an account after repeated failures, with Retry-After", async () => {
    const attempt = (password: string, ip: string) => signInRequest(app, email, password, ip);
    // Each failure from another address, so only the account's counter matters here.
    assert.equal((await attempt("wrong-1", "10.1.0.1")).statusCode, 401);
    assert.equal((await attempt("wrong-2", "10.1.0.2")).statusCode, 401);
    const slowed = await attempt(PASSWORD, "10.1.0.3");
    assert.equal(slowed.statusCode, 429, "even the right password must wait");
    assert.equal(slowed.json().error.code, "sign_in_throttled");
    assert.equal(slowed.headers["retry-after"], "10");
    for (let i = 3; i <= 5; i++) {
      advance(61_000);
      assert.equal((await attempt(`wrong-${i}`, `10.1.0.${i + 1}`)).statusCode, 401);
    }
    advance(61_000);
    const locked = await attempt(PASSWORD, "10.1.0.9");
    assert.equal(locked.statusCode, 429);
    assert.equal(locked.json().error.code, "sign_in_locked");
    assert.ok(Number(locked.headers["retry-after"]) > 800);
    advance(15 * 60_000);
    assert.equal((await attempt(PASSWORD, "10.1.0.10")).statusCode, 200, "the lock expires");
    assert.equal(
      (await attempt(PASSWORD, "10.1.0.10")).statusCode,
      200,
      "success clears the account's failures",
    );
  });

  it("locks a client address that tries many accounts", async () => {
    const ip = "10.2.0.1";
    for (let i = 0; i < 6; i++) {
      advance(61_000);
      assert.equal((await signInRequest(app, `guess${i}@orga.example`, "guess", ip)).statusCode, 401);
    }
    advance(61_000);
    const locked = await signInRequest(app, "other@orga.example", PASSWORD, ip);
    assert.equal(locked.json().error.code, "sign_in_locked");
    assert.equal((await signInRequest(app, "other@orga.example", PASSWORD, "10.2.0.2")).statusCode, 200);
  });

  it("marks the cookie Secure when a trusted proxy says the request came over HTTPS", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/auth/sign-in",
      payload: { email, password: PASSWORD },
      headers: { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.cookies[0].secure, true);
  });
});

describe("rate limits per key, per session and per address", () => {
  let ctx: TestContext;
  before(async () => {
    const store = new SqliteStore(":memory:");
    const app = await buildApp({
      store,
      networks: new NetworkRegistry(() => []),
      security: { rateLimits: { perKey: 3, perSession: 2, perAddress: 4 } },
    });
    ctx = { ...(await makeTestApp(store)), app };
    await addUserWithPassword(store, ctx.orgA.orgId, "admin@orga.example", "admin");
  });
  after(async () => {
    await ctx.app.close();
    await ctx.store.close();
  });

  const byKey = (key: string) =>
    ctx.app.inject({ method: "GET", url: "/api/v2/zone_sets", headers: { "x-stl-key": key } });

  it("answers 429 with Retry-After in the error shape once a key is over its limit; other keys go on", async () => {
    for (let i = 0; i < 3; i++) assert.equal((await byKey(ctx.orgA.key)).statusCode, 200);
    const over = await byKey(ctx.orgA.key);
    assert.equal(over.statusCode, 429);
    assert.ok(Number(over.headers["retry-after"]) >= 1);
    assert.equal(over.json().status, "error");
    assert.equal(over.json().error.code, "rate_limited");
    assert.equal((await byKey(ctx.orgB.key)).statusCode, 200);
  });

  it("applies the limit an admin sets on a key", async () => {
    const admin = await signedIn(ctx.app, "admin@orga.example");
    const key = (await ctx.store.accounts.listKeys(ctx.orgA.orgId)).find(
      (k) => k.prefix === ctx.orgA.key.slice(0, 10),
    )!;
    // Raise the exhausted key's limit: it works again within the same minute.
    const res = await admin.request("PATCH", `/admin/api/keys/${key.id}`, { rate_limit_per_minute: 5 });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await byKey(ctx.orgA.key)).statusCode, 200);
    assert.equal((await byKey(ctx.orgA.key)).statusCode, 429);
    const invalid = await admin.request("PATCH", `/admin/api/keys/${key.id}`, { rate_limit_per_minute: 0 });
    assert.equal(invalid.statusCode, 400);
  });

  it("limits a session and an anonymous address", async () => {
    const client = await signedIn(ctx.app, "admin@orga.example");
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await client.request("GET", "/auth/session")).statusCode);
    assert.deepEqual(results.slice(0, 1), [200]);
    assert.ok(results.includes(429), `a session is limited: ${results}`);
    const anonymous = [];
    for (let i = 0; i < 5; i++)
      anonymous.push((await ctx.app.inject({ url: "/healthz", remoteAddress: "10.3.0.1" })).statusCode);
    assert.deepEqual(anonymous, [200, 200, 200, 200, 429]);
  });
});

describe("security headers, and no secret in the database or the log", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-security-"));
  const webRoot = join(dir, "web");
  const logLines: string[] = [];
  let app: FastifyInstance;
  let store: SqliteStore;
  let key: string;
  let analysisUuid: string;

  before(async () => {
    store = new SqliteStore(join(dir, "streetflow.db"));
    const org = await makeOrg(store, "Org A");
    key = org.key;
    await addUserWithPassword(store, org.orgId, "admin@orga.example", "admin");
    await seedAnalysisData(store, org.orgId);
    const networks = storeNetworks(store.network);
    const spec = await validateAnalysisRequest(odRequest(org.email), { store, networks, orgId: org.orgId });
    analysisUuid = (await store.analyses.create({ spec, jobId: null })).uuid;
    await store.analyses.markRunning(analysisUuid);
    await store.analyses.complete(analysisUuid, { sample_size: "zone,trips\nCentre,3\n" });
    // A stand-in bundle: the headers do not depend on the page.
    rmSync(webRoot, { recursive: true, force: true });
    mkdirSync(webRoot);
    writeFileSync(join(webRoot, "index.html"), "<!doctype html><title>t</title>");
    const stream = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    app = await buildApp({ store, networks, webRoot, logSink: stream });
  });
  after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const assertSecurityHeaders = (headers: Record<string, unknown>, what: string) => {
    const csp = String(headers["content-security-policy"]);
    assert.match(csp, /frame-ancestors 'none'/, what);
    assert.match(csp, /default-src 'self'/, what);
    assert.match(csp, /worker-src 'self' blob:/, what);
    assert.doesNotMatch(csp, /upgrade-insecure-requests/, what);
    assert.equal(headers["x-content-type-options"], "nosniff", what);
    assert.equal(headers["x-frame-options"], "DENY", what);
    assert.equal(headers["referrer-policy"], "no-referrer", what);
  };

  it("sends the headers on HTML, JSON, CSV and error responses", async () => {
    const html = await app.inject({ url: "/" });
    assert.match(String(html.headers["content-type"]), /text\/html/);
    assertSecurityHeaders(html.headers, "HTML");
    const json = await app.inject({ url: `/api/v2/zone_sets?key=${key}` });
    assert.match(String(json.headers["content-type"]), /application\/json/);
    assertSecurityHeaders(json.headers, "JSON");
    const csv = await app.inject({
      url: `/api/v2/analyses/download/uuid/${analysisUuid}/sample_size`,
      headers: { "x-stl-key": key },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(String(csv.headers["content-type"]), /text\/csv/);
    assertSecurityHeaders(csv.headers, "CSV");
    assertSecurityHeaders((await app.inject({ url: "/nowhere" })).headers, "404");
    const docs = await app.inject({ url: "/docs/static/index.html" });
    assert.match(String(docs.headers["content-security-policy"]), /frame-ancestors 'none'/, "API docs");
  });

  it("stores no password, key, session id or reset token in plain text and logs none", async () => {
    const signIn = await signInRequest(app, "admin@orga.example");
    const sessionId = signIn.cookies[0].value;
    const csrf = signIn.json().csrf_token;
    const admin = { cookie: `streetflow_session=${sessionId}`, "x-csrf-token": csrf };
    const created = await app.inject({ method: "POST", url: "/admin/api/keys", headers: admin, payload: {} });
    const newKey = created.json().key as string;
    const invite = await app.inject({
      method: "POST",
      url: "/admin/api/users",
      headers: admin,
      payload: { email: "new@orga.example", role: "analyst" },
    });
    const resetToken = /#reset=(.+)$/.exec(invite.json().reset_link)![1];
    await app.inject({
      method: "POST",
      url: "/auth/reset",
      payload: { token: resetToken, password: "secret reset password" },
    });
    await app.inject({ url: `/api/v2/zone_sets?key=${newKey}` });
    await signInRequest(app, "admin@orga.example", "a wrong password typed");
    store.db.pragma("wal_checkpoint(TRUNCATE)");

    const files = readdirSync(dir).filter((f) => f.startsWith("streetflow.db"));
    const database = files.map((f) => readFileSync(join(dir, f)).toString("latin1")).join("");
    const log = logLines.join("");
    assert.ok(log.includes(`"route":"/api/v2/zone_sets"`), "requests are logged, by route");
    const secrets = {
      password: PASSWORD,
      "reset password": "secret reset password",
      "wrong password": "a wrong password typed",
      "demo key": key,
      "new key": newKey,
      "session id": sessionId,
      "reset token": resetToken,
    };
    for (const [what, secret] of Object.entries(secrets)) {
      assert.ok(!database.includes(secret), `${what} is not in the database file`);
      assert.ok(!log.includes(secret), `${what} is not in the log`);
    }
  });
});
