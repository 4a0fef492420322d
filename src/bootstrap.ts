import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_EMAIL, DEMO_ORG, issueApiKey } from "./domain/accounts.js";
import { importNetwork } from "./services/network-import.js";
import type { Runtime } from "./runtime.js";

/** The shipped demo network (repo `data/osm/`), resolved from src/ or dist/ alike. */
export const DEMO_PBF = resolve(fileURLToPath(import.meta.url), "../../data/osm/monaco.osm.pbf");
export const DEMO_COUNTRY = "mc";

/**
 * First start on an empty store: a demo organization, user and key (written to
 * demo-api-key.txt so a newcomer can curl at once) and the Monaco network.
 */
export async function ensureDemoData(rt: Runtime, log: (line: string) => void): Promise<void> {
  if (rt.store.accounts.isEmpty()) {
    const org = rt.store.accounts.createOrganization(DEMO_ORG);
    rt.store.accounts.addUser(DEMO_EMAIL, org.id);
    const { key } = issueApiKey(rt.store, org.id, "demo");
    const file = join(rt.dataDir, "demo-api-key.txt");
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    log(`Demo organization "${DEMO_ORG}", user ${DEMO_EMAIL}`);
    log(`Demo API key: ${key}  (also in ${file})`);
  }
  if (!rt.store.network.countries().some((c) => c.country === DEMO_COUNTRY)) {
    log(`Importing the demo road network (Monaco, © OpenStreetMap contributors) as "${DEMO_COUNTRY}"...`);
    await importNetwork(rt, DEMO_PBF, DEMO_COUNTRY, log);
  }
}
