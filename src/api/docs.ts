import type { FastifyInstance, FastifySchema, RouteOptions } from "fastify";
import type { TSchema } from "typebox";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { swaggerCsp } from "./security/headers.js";

/** The three ways a key is sent; Swagger UI's Authorize asks for each once and fills every call. */
const SECURITY_SCHEMES = {
  queryKey: { type: "apiKey", in: "query", name: "key", description: "/api/v2: the key as query parameter" },
  stlKey: { type: "apiKey", in: "header", name: "x-stl-key", description: "/api/v2 (and /counts/v1)" },
  serviceKey: { type: "apiKey", in: "header", name: "x-service-key", description: "/counts/v1" },
} as const;

/** Which schemes each route group accepts (alternatives), by URL prefix. */
const GROUP_SECURITY: [prefix: string, security: Record<string, string[]>[]][] = [
  ["/api/v2/", [{ queryKey: [] }, { stlKey: [] }]],
  ["/counts/v1/", [{ serviceKey: [] }, { stlKey: [] }]],
];

/** Streetflow's mark: three flow lines over a road, in the web application's colours. */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40">
<rect x="2" y="6" width="28" height="28" rx="6" fill="#1f6feb"/>
<path d="M8 26c6-10 10-10 16-2M8 18c6-8 10-8 16-1" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round"/>
<text x="38" y="27" font-family="system-ui,sans-serif" font-size="20" font-weight="600" fill="#fff">Streetflow</text>
</svg>`;

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * The body the document shows when the route validates a looser envelope and checks the fields
     * itself (POST /analyses reports every problem at once): the real request schema.
     */
    documentedBody?: TSchema;
  }
}

function documented({ schema, url, route }: { schema: FastifySchema; url: string; route?: RouteOptions }) {
  const group = GROUP_SECURITY.find(([prefix]) => url.startsWith(prefix));
  const body = route?.config?.documentedBody;
  return { schema: { ...schema, ...(body && { body }), ...(group && { security: group[1] }) }, url };
}

/** The OpenAPI document (`/docs/openapi.json`) and Swagger UI (`/docs`), under Streetflow's name. */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "Streetflow",
        version: "0.1.0",
        description:
          "Zone and analysis interface under /api/v2 (key in query `key` or header `x-stl-key`); " +
          "road-segment counts under /counts/v1 (header `x-service-key`). " +
          "Authorize once with your key in all three fields to try every route.",
      },
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    transform: documented,
  });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    staticCSP: true,
    transformStaticCSP: swaggerCsp,
    logo: { type: "image/svg+xml", content: Buffer.from(LOGO_SVG), href: "/docs", target: "_self" },
    theme: {
      title: "Streetflow API",
      favicon: [
        {
          filename: "favicon.svg",
          rel: "icon",
          sizes: "any",
          type: "image/svg+xml",
          content: Buffer.from(LOGO_SVG),
        },
      ],
    },
    uiConfig: { persistAuthorization: true },
  });
  app.get("/docs/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
