import type { FastifyReply, FastifyRequest } from "fastify";
import { authenticateKey } from "../domain/accounts.js";
import { unauthorized } from "../domain/errors.js";
import type { ApiKeyRecord, Store } from "../store/types.js";

declare module "fastify" {
  interface FastifyRequest {
    apiKey: ApiKeyRecord;
  }
}

type KeySource = (request: FastifyRequest) => string | undefined;

const header = (request: FastifyRequest, name: string): string | undefined => {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** v2: `?key=` or header `x-stl-key`, as the published client libraries send it. */
export const zoneApiKey: KeySource = (request) =>
  (request.query as { key?: string } | undefined)?.key ?? header(request, "x-stl-key");

/** counts v1: header `x-service-key` (vendor), or `x-stl-key` that other client code sends. */
export const countsApiKey: KeySource = (request) =>
  header(request, "x-service-key") ?? header(request, "x-stl-key");

/** onRequest hook: rejects with 401 before any body is parsed or work is done. */
export function requireApiKey(store: Store, source: KeySource) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const given = source(request);
    if (!given) throw unauthorized("an API key is required");
    const record = authenticateKey(store, given);
    if (!record) throw unauthorized("the API key is not valid");
    request.apiKey = record;
  };
}
