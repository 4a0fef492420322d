import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import type { Basemap } from "../config/config.js";

/** dist/web/ of the repository, from src/api/ (tsx) and dist/api/ (built) alike. */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL("../../dist/web/", import.meta.url));

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Streetflow</title></head>
<body><h1>Streetflow</h1>
<p>The web application is not built. Run <code>npm run build</code> (or <code>npm run build:web</code>) and reload.</p>
<p>The API works meanwhile: <a href="/docs">API documentation</a>.</p></body></html>`;

/**
 * Serves the bundled web application at `/`. Without a bundle, `/` answers 503 with a page that
 * says how to build it, and the API keeps working.
 */
export async function registerWebApp(app: FastifyInstance, webRoot: string): Promise<void> {
  if (!existsSync(join(webRoot, "index.html"))) {
    app.get("/", { schema: { hide: true } }, async (_request, reply) =>
      reply.status(503).type("text/html; charset=utf-8").send(NOT_BUILT_PAGE),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: webRoot,
    prefix: "/",
    index: "index.html",
    // Files are listed once at start: unknown paths fall through to the JSON 404 handler.
    wildcard: false,
    // The bundle's names do not change between builds, so browsers revalidate (ETag) rather than cache blindly.
    cacheControl: true,
    maxAge: 0,
    setHeaders: (reply, path) => {
      if (path.endsWith(".html")) reply.header("cache-control", "no-cache");
    },
  });
}

const ClientConfig = Type.Object({
  basemap: Type.Union([
    Type.Null(),
    Type.Object({
      url: Type.String(),
      attribution: Type.Union([Type.String(), Type.Null()]),
      type: Type.Union([Type.Literal("raster"), Type.Literal("style")]),
    }),
  ]),
});

/**
 * `GET /config.json`: the page's settings (the optional basemap), read before sign-in and so without a key;
 * it holds nothing secret. Sent `no-cache` so a changed setting shows on the next load.
 */
export function registerClientConfig(app: FastifyInstance, basemap: Basemap | null): void {
  app.get(
    "/config.json",
    { schema: { hide: true, response: { 200: ClientConfig } } },
    async (_request, reply) => reply.header("cache-control", "no-cache").send({ basemap }),
  );
}
