import { fail } from "../domain/errors.js";
import { TransitSimulation, type TransitOptions } from "../engine/simulate/transit.js";
import type { AppContext } from "./context.js";
import { storeMatchedTrips } from "./ingest.js";
import type { MatchedTrip } from "../engine/trips/types.js";

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
  const riders = await simulateTransitRiders(ctx, country, opts, log);
  return riders ? await storeSimulatedRiders(ctx, riders, log) : 0;
}

/** Transit riders' journeys simulated and not yet stored (the demo simulates them early, stores them last). */
export interface SimulatedRiders {
  country: string;
  trips: MatchedTrip[];
  busLines: number;
  railLines: number;
}

/** The journeys storeTransitRiders stores; null (and said) when the import has no transit layer. */
export async function simulateTransitRiders(
  ctx: AppContext,
  country: string,
  opts: TransitOptions,
  log: (line: string) => void,
): Promise<SimulatedRiders | null> {
  const code = country.toLowerCase();
  const network = await ctx.networks.get(code);
  if (!network) throw fail("unknown_country", { country: code });
  const routes = await ctx.store.network.loadTransit(code);
  if (routes.length === 0) {
    log(`no bus routes or rail lines imported for "${code}"; import its OSM extract again to get them`);
    return null;
  }
  const sim = new TransitSimulation(network, routes, opts);
  const trips = [...sim.trips()];
  const busLines = sim.lines.filter((l) => l.kind === "bus").length;
  return { country: code, trips, busLines, railLines: sim.lines.length - busLines };
}

export async function storeSimulatedRiders(
  ctx: AppContext,
  riders: SimulatedRiders,
  log: (line: string) => void,
): Promise<number> {
  const { stored } = await storeMatchedTrips(ctx, riders.country, riders.trips);
  log(
    `stored ${stored} transit rider trips (bus and rail rides, walks to and from the stops) ` +
      `on ${riders.busLines} bus lines and ${riders.railLines} rail lines`,
  );
  return stored;
}
