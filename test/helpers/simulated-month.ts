import { presetAreasOf } from "../../src/domain/preset-geographies.js";
import { readAdminAreas } from "../../src/engine/network/admin-areas.js";
import { tripMatcher } from "../../src/engine/matching/index.js";
import { storeNetworks } from "../../src/app/networks.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { Simulation, writeSimulation } from "../../src/engine/simulate/index.js";
import type { AppContext } from "../../src/app/context.js";
import { ingestFiles } from "../../src/app/ingest.js";
import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { MONACO_PBF } from "./bundled-data.js";

export const PLANNER_EMAIL = "planner@example.org";

/**
 * The ground-truth tests' set-up: the Monaco network in `store` (with its quarters and communes as preset
 * geographies when `presets`), one simulated month (March 2025, phones) written to `dir` and ingested
 * through the real splitter and matcher, and an organization whose user is PLANNER_EMAIL.
 */
export async function simulatedMonacoMonth(
  store: SqliteStore,
  dir: string,
  { tripsPerDay, seed, presets = false }: { tripsPerDay: number; seed: number; presets?: boolean },
) {
  const segments = await readOsmSegments(MONACO_PBF);
  await store.network.replaceCountry(
    { country: "mc", source: "test", segmentCount: segments.length, importedAt: "" },
    segments,
  );
  if (presets)
    await store.presetAreas.replaceCountry("mc", presetAreasOf("mc", await readAdminAreas(MONACO_PBF)));
  const rt: AppContext = {
    store,
    networks: storeNetworks(store.network),
  };
  const network = (await rt.networks.get("mc"))!;
  const sim = new Simulation(network, { from: "2025-03", to: "2025-03", tripsPerDay, seed, source: "lbs" });
  const trips = [...sim.trips()];
  const written = writeSimulation(trips, dir);
  await ingestFiles(rt, [written.months[0].traces], {
    ...{ country: "mc", source: "lbs", vehicleClass: "personal" },
    matcher: tripMatcher(network),
  });
  const org = await store.accounts.createOrganization("Planners");
  await store.accounts.addUser(PLANNER_EMAIL, org.id);
  return { rt, network, sim, trips, ctx: { store, networks: rt.networks, orgId: org.id } };
}
