import helmet from "@fastify/helmet";
import type { FastifyInstance } from "fastify";
import type { Basemap } from "../../config/config.js";

/** The basemap's origin, which the page must be allowed to fetch tiles and styles from. */
function basemapOrigins(basemap: Basemap | null): string[] {
  if (!basemap || basemap.url.startsWith("/")) return [];
  return [new URL(basemap.url.replace(/[{}]/g, "")).origin];
}

/**
 * Security headers on every response (pages, JSON, CSV, errors). The CSP allows only this server's own
 * scripts; MapLibre's worker is a module file served beside the bundle (`worker-src 'self'`), and it and
 * the map build images from blobs and data URLs. `upgrade-insecure-requests` is left out: installations on
 * a plain-HTTP intranet would otherwise have every request rewritten to an HTTPS that is not there.
 */
export async function registerSecurityHeaders(app: FastifyInstance, basemap: Basemap | null): Promise<void> {
  const external = basemapOrigins(basemap);
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        scriptSrcAttr: ["'none'"],
        workerSrc: ["'self'", "blob:"],
        childSrc: ["'self'", "blob:"],
        connectSrc: ["'self'", ...external],
        imgSrc: ["'self'", "data:", "blob:", ...external],
        styleSrc: ["'self'"],
        fontSrc: ["'self'", "data:"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
    // HTTPS is the proxy's business (see trustProxy); a plain-HTTP install must not promise it.
    strictTransportSecurity: false,
  });
}

/** Swagger UI sends its own CSP (hashes of its inline code); keep its framing and upgrade rules ours. */
export const swaggerCsp = (header: string) =>
  header
    .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
    .replace(/\s*upgrade-insecure-requests;?/, "");
