import Fastify, { type FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Basemap, OverloadSettings } from "../config/config.js";
import type { AppContext } from "../app/context.js";
import { inlineRunner, type HeavyRunner } from "../app/heavy/tasks.js";
import { NEVER_SHED, NO_SHEDDING, registerLoadShedding } from "./heavy.js";
import { clientErrorHandler, frameworkErrors, installErrorHandling, ErrorBody } from "./errors.js";
import { rejectRepeatedQuery, requireApiKey, zoneApiKey } from "./auth.js";
import type { CountsConfig } from "./counts/config.js";
import { countsRoutes } from "./counts/index.js";
import { analysisRoutes } from "./v2/analyses.js";
import { dateRangeRoutes } from "./v2/date-ranges.js";
import { accountRoutes } from "./v2/account.js";
import { echoRoutes } from "./v2/echo.js";
import { zoneSetRoutes } from "./v2/zone-sets.js";
import { osmIdRoutes } from "./v2/osm-ids.js";
import { networkRoutes } from "./v2/networks.js";
import { placeRoutes } from "./v2/places.js";
import { registerApiDocs } from "./docs.js";
import { BODY_LIMITS } from "./limits.js";
import { loggerOptions, type LogSink } from "./logging.js";
import { presetGeographyRoutes } from "./v2/preset-geographies.js";
import { tagRoutes } from "./v2/tags.js";
import { DEFAULT_WEB_ROOT, registerClientConfig, registerWebApp } from "./web.js";
import cookie from "@fastify/cookie";
import { adminRoutes } from "./security/admin.js";
import { registerSecurityHeaders } from "./security/headers.js";
import { securityOptions, type SecurityOptions, type SecurityOverrides } from "./security/options.js";
import { registerRateLimits } from "./security/rate-limits.js";
import { sessionRoutes } from "./security/sessions.js";

/** The application's context (store, networks) and the HTTP server's own options. */
export interface AppDeps extends AppContext {
  /** Log one line per request to stdout (the server does; tests pass `logSink` instead). */
  logger?: boolean;
  logSink?: LogSink;
  /** Overrides of the counts interface's page sizes, result expiry, clock and metrics provider. */
  counts?: Partial<CountsConfig>;
  /** Directory of the built web application (default dist/web/). */
  webRoot?: string;
  /** Map under the web application's layers, sent to the page in /config.json (none by default). */
  basemap?: Basemap | null;
  /** Session and lockout limits, rate limits (raise them for load tests) and the trust-proxy setting. */
  security?: SecurityOverrides;
  /**
   * Runs counts selections and metrics and OSM-way searches: the server's worker-thread pool with its
   * admission control (src/main/heavy-pool.ts); inline on the request's thread by default.
   */
  heavy?: HeavyRunner;
  /** Request deadlines and event-loop shedding (the server's come from the environment); none by default. */
  overload?: OverloadSettings;
}

declare module "fastify" {
  interface FastifyInstance {
    deps: AppDeps;
    security: SecurityOptions;
    heavy: HeavyRunner;
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const security = securityOptions(deps.security);
  const app = Fastify({
    ...loggerOptions(deps.logger ?? false, deps.logSink),
    trustProxy: security.trustProxy,
    bodyLimit: BODY_LIMITS.default,
    frameworkErrors,
    clientErrorHandler,
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate("deps", deps);
  app.decorate("security", security);
  app.decorate("heavy", deps.heavy ?? inlineRunner({ store: deps.store, networks: deps.networks }));
  app.decorateRequest("principal", null as never);
  app.decorateRequest("session", null);
  installErrorHandling(app);
  await registerLoadShedding(app, deps.overload ?? NO_SHEDDING);
  app.addSchema(ErrorBody);
  await app.register(cookie);
  await registerSecurityHeaders(app, deps.basemap ?? null);
  // Before any route: the plugin attaches its hook to the routes registered after it.
  await registerRateLimits(app, deps.store, security.rateLimits);

  await registerApiDocs(app);
  // Touches neither the store nor the pool, and is never shed: it answers while heavy work runs.
  app.get("/healthz", { schema: { hide: true }, config: NEVER_SHED }, async () => ({ status: "ok" }));

  await app.register(
    async (v2) => {
      v2.addHook("onRequest", rejectRepeatedQuery);
      v2.addHook("onRequest", requireApiKey(deps.store, zoneApiKey, security.policy));
      await v2.register(echoRoutes);
      await v2.register(accountRoutes);
      await v2.register(dateRangeRoutes);
      await v2.register(zoneSetRoutes);
      await v2.register(osmIdRoutes);
      await v2.register(analysisRoutes);
      await v2.register(tagRoutes);
      await v2.register(networkRoutes);
      await v2.register(placeRoutes);
      await v2.register(presetGeographyRoutes);
    },
    { prefix: "/api/v2" },
  );
  await app.register(countsRoutes, { prefix: "/counts/v1" });
  await app.register(sessionRoutes, { prefix: "/auth" });
  await app.register(adminRoutes, { prefix: "/admin/api" });
  registerClientConfig(app, deps.basemap ?? null);
  await registerWebApp(app, deps.webRoot ?? DEFAULT_WEB_ROOT);
  return app;
}
