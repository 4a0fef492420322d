/**
 * Largest request body each kind of route reads. Parsing JSON blocks the process, so each route takes
 * only what its biggest valid request needs (a 63 MB body once held every other request for 4 s).
 */
const MiB = 1024 * 1024;

export const BODY_LIMITS = {
  /** Everything not listed below: analyses, status lookups, lifecycle calls (Fastify's default). */
  default: 1 * MiB,
  /** One geometry of at most 10,000 positions (MAX_GEOMETRY_POSITIONS) plus options, even pretty-printed. */
  geometry: 2 * MiB,
  /** A zone set: up to 7,000 zones, each a detailed polygon. */
  zoneSet: 32 * MiB,
  /** The echo route's message of at most 10,000 characters. */
  echo: 64 * 1024,
} as const;
