import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

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
