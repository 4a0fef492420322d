import type { FastifyReply, FastifyRequest } from "fastify";
import { authenticateKey } from "../domain/accounts.js";
import { badRequest, unauthorized } from "../domain/errors.js";
import type { ApiKeyRecord, Store } from "../store/types.js";

declare module "fastify" {
  interface FastifyRequest {
    apiKey: ApiKeyRecord;
  }
}

/** Where a key was found (for the error's `field`) and what was given. */
export interface GivenKey {
  field: string;
  value: unknown;
}

type KeySource = (request: FastifyRequest) => GivenKey | undefined;

function fromHeader(request: FastifyRequest, name: string): GivenKey | undefined {
  const value = request.headers[name];
  return value === undefined ? undefined : { field: name, value };
}

function fromQuery(request: FastifyRequest, name: string): GivenKey | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return value === undefined ? undefined : { field: name, value };
}

/** v2: `?key=` or header `x-stl-key`, as the published client libraries send it. */
export const zoneApiKey: KeySource = (request) =>
  fromQuery(request, "key") ?? fromHeader(request, "x-stl-key");

/** counts v1: header `x-service-key` (vendor), or `x-stl-key` that other client code sends. */
export const countsApiKey: KeySource = (request) =>
  fromHeader(request, "x-service-key") ?? fromHeader(request, "x-stl-key");

/** onRequest hook: rejects with 401 before any body is parsed or work is done. */
export function requireApiKey(store: Store, source: KeySource) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const given = source(request);
    if (given === undefined || given.value === "") throw unauthorized("an API key is required");
    // A repeated parameter or header arrives as an array: one key is expected, not a guess between several.
    if (typeof given.value !== "string")
      throw badRequest("invalid_request", `${given.field} must be given once`, given.field);
    const record = authenticateKey(store, given.value);
    if (!record) throw unauthorized("the API key is not valid");
    request.apiKey = record;
  };
}

/**
 * Root onRequest hook: a query parameter given twice (`?page=1&page=2`) is ambiguous, and the route
 * schemas expect one string, so it is refused, naming the parameter, before anything else runs.
 */
export async function rejectRepeatedQuery(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(query ?? {}))
    if (Array.isArray(value))
      throw badRequest("invalid_request", `query parameter ${name} must be given once`, name);
}
