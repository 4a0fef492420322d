import { fail } from "../domain/errors.js";
import { TransitSimulation, type TransitOptions } from "../engine/simulate/transit.js";
import type { AppContext } from "./context.js";
import { storeMatchedTrips } from "./ingest.js";

/**
 * Simulates transit riders on a country's imported bus routes and rail lines and stores their
 * journeys (walk, ride, walk) as matched trips. Answers the trips stored; 0 when the import has
 * no transit layer (an older import: import the extract again).
 */
export async function storeTransitRiders(
  ctx: AppContext,
  country: string,
  opts: TransitOptions,
  log: (line: string) => void,
): Promise<number> {
  const code = country.toLowerCase();
  const network = await ctx.networks.get(code);
  if (!network) throw fail("unknown_country", { country: code });
  const routes = await ctx.store.network.loadTransit(code);
  if (routes.length === 0) {
    log(`no bus routes or rail lines imported for "${code}"; import its OSM extract again to get them`);
    return 0;
  }
  const sim = new TransitSimulation(network, routes, opts);
  const { stored } = await storeMatchedTrips(ctx, code, sim.trips());
  const lines = sim.lines.filter((l) => l.kind === "bus").length;
  log(
    `stored ${stored} transit rider trips (bus and rail rides, walks to and from the stops) ` +
      `on ${lines} bus lines and ${sim.lines.length - lines} rail lines`,
  );
  return stored;
}
