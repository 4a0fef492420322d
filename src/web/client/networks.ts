import type { Bbox, NetworkInfo } from "./api.js";

/**
 * The network the page opens on: the one with the most recent trips (an import of a second country without
 * trips must not hide the data), else the first in the list.
 */
export function initialNetwork(networks: NetworkInfo[]): NetworkInfo | undefined {
  let best = networks[0];
  for (const n of networks)
    if (n.last_trip_month !== null && (best.last_trip_month ?? "") < n.last_trip_month) best = n;
  return best;
}

/** Whether two [w, s, e, n] boxes meet (touching counts). */
export function boxesMeet(a: Bbox, b: Bbox): boolean {
  return a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];
}

/**
 * Whether a zone set belongs in the lists of a network: its zones' box meets the network's. Zone sets carry
 * no country; a set without a box (no positions) is listed everywhere rather than lost.
 */
export function zoneSetOnNetwork(set: { bbox?: Bbox | null }, network: NetworkInfo | undefined): boolean {
  return !network || !set.bbox || boxesMeet(set.bbox, network.bbox);
}
