import { createZoneSet } from "../../src/app/zone-sets.js";
import { storeNetworks } from "../../src/app/networks.js";
import { segmentIdOf } from "../../src/engine/network/types.js";
import type { MatchedTrip, TripPurpose, VehicleClass } from "../../src/engine/trips/types.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/app/ports/store.js";
import { at, seg } from "./network.js";

/**
 * The hand-counted OD scenario: an east-west street of three 100 m segments in
 * Monaco (UTC+1 in January), zones drawn as boxes along it, and trips built
 * with exact times so every expected number can be counted by hand.
 */
export const STREET = [0, 1, 2].map((i) =>
  seg(1, i, i + 1, i + 2, [
    [i * 100, 0],
    [(i + 1) * 100, 0],
  ]),
);

export const EMAIL = "p@example.org";

/** A box across the street from x0 to x1 metres, 40 m tall, as MultiPolygon coordinates. */
export const square = (x0: number, x1: number) => [
  [[at(x0, -20), at(x1, -20), at(x1, 20), at(x0, 20), at(x0, -20)]],
];

export interface StreetTrip {
  device: string;
  /** Local Monaco time, e.g. "2025-01-06T07:00:00". */
  localIso: string;
  minutes: number;
  vehicleClass?: VehicleClass;
  east?: boolean;
  lengthM?: number;
  purpose?: TripPurpose;
  incomeBand?: number;
}

/** A trip along the whole street, east- or westbound, its time spread evenly over the three segments. */
export function streetTrip(t: StreetTrip): MatchedTrip {
  const east = t.east ?? true;
  const startT = Date.parse(`${t.localIso}+01:00`);
  const endT = startT + t.minutes * 60_000;
  const order = east ? [0, 1, 2] : [2, 1, 0];
  const step = (endT - startT) / 3;
  const trip: MatchedTrip = {
    deviceId: t.device,
    vehicleClass: t.vehicleClass ?? "personal",
    source: "lbs",
    origin: east ? at(10, 0) : at(290, 0),
    destination: east ? at(290, 0) : at(10, 0),
    startT,
    endT,
    lengthM: t.lengthM ?? 280,
    path: order.map((i, k) => ({
      segmentId: segmentIdOf(1, i),
      forward: east,
      enterT: startT + k * step,
      exitT: startT + (k + 1) * step,
    })),
  };
  if (t.purpose) trip.purpose = t.purpose;
  if (t.incomeBand !== undefined) trip.incomeBand = t.incomeBand;
  return trip;
}

/** The hand-counted week: 7 cars east on Monday 07:00, 2 heavy trucks on Saturday noon, 1 car back west. */
export function streetWeekTrips(): MatchedTrip[] {
  const trips: MatchedTrip[] = [];
  for (let i = 0; i < 7; i++)
    trips.push(streetTrip({ device: `car${i}`, localIso: "2025-01-06T07:00:00", minutes: 10 }));
  for (let i = 0; i < 2; i++)
    trips.push(
      streetTrip({
        device: `truck${i}`,
        localIso: "2025-01-11T12:00:00",
        minutes: 20,
        vehicleClass: "heavy_commercial",
      }),
    );
  trips.push(streetTrip({ device: "car0", localIso: "2025-01-07T08:30:00", minutes: 6, east: false }));
  return trips;
}

/** An in-memory store with the street imported as country `mc` and an organization whose user is EMAIL. */
export async function streetStore() {
  const store = new SqliteStore(":memory:");
  const networks = storeNetworks(store.network);
  await store.network.replaceCountry(
    { country: "mc", source: "test", segmentCount: 3, importedAt: "" },
    STREET,
  );
  const org = await store.accounts.createOrganization("Planners");
  await store.accounts.addUser(EMAIL, org.id);
  return { store, networks, ctx: { store, networks, orgId: org.id } };
}

/** A polygon zone across the street from x0 to x1 metres. */
export function boxZone(
  name: string,
  id: number,
  x0: number,
  x1: number,
  properties: Record<string, unknown> = {},
) {
  return {
    type: "Feature",
    properties: { name, id, ...properties },
    geometry: { type: "MultiPolygon", coordinates: square(x0, x1) },
  };
}

/** The zone set "Street": end zones West (x -20..50) and East (x 250..320) around the trips' ends. */
export async function createStreetEnds(ctx: Awaited<ReturnType<typeof streetStore>>["ctx"]) {
  return await createZoneSet(
    {
      insight_login_email: EMAIL,
      zone_set_name: "Street",
      zones: {
        type: "FeatureCollection",
        features: [boxZone("West", 1, -20, 50), boxZone("East", 2, 250, 320)],
      },
    },
    ctx,
  );
}

/**
 * Two admin_10 quarters of "mc" over the street, West (OSM id 501) from x -50 m to `splitM`, East (502) from
 * there to `endM`: the preset geography of the hand-counted tests.
 */
export async function seedStreetQuarters(store: Store, splitM = 150, endM = 350): Promise<void> {
  const quarter = (areaId: string, name: string, x0: number, x1: number) => ({
    country: "mc",
    geographyType: "admin_10",
    areaId,
    osmId: Number(areaId),
    name,
    geometry: { type: "MultiPolygon" as const, coordinates: square(x0, x1) },
  });
  await store.presetAreas.replaceCountry("mc", [
    quarter("501", "West Quarter", -50, splitM),
    quarter("502", "East Quarter", splitM, endM),
  ]);
}
