import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.js";
import { issueApiKey } from "../../src/app/accounts.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { storeNetworks } from "../../src/app/networks.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

export interface TestOrg {
  orgId: string;
  key: string;
  email: string;
}

export interface TestContext {
  app: FastifyInstance;
  store: SqliteStore;
  networks: NetworkRegistry;
  orgA: TestOrg;
  orgB: TestOrg;
}

export async function makeOrg(store: SqliteStore, name: string): Promise<TestOrg> {
  const org = await store.accounts.createOrganization(name);
  const email = `planner@${name.toLowerCase().replace(/\W+/g, "")}.example`;
  await store.accounts.addUser(email, org.id);
  return { orgId: org.id, key: (await issueApiKey(store, org.id)).key, email };
}

/** Rate limits out of the way: tests poll as fast as they can (the security tests set their own). */
export const UNLIMITED_RATES = { rateLimits: { perKey: 1e9, perSession: 1e9, perAddress: 1e9 } };

/** An app over a private in-memory store with two organizations, each with a user and a key. */
export async function makeTestApp(store = new SqliteStore(":memory:")): Promise<TestContext> {
  const networks = storeNetworks(store.network);
  const app = await buildApp({ store, networks, security: UNLIMITED_RATES });
  return { app, store, networks, orgA: await makeOrg(store, "Org A"), orgB: await makeOrg(store, "Org B") };
}
