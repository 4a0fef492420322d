import { type AnalysisSpec } from "../../src/domain/analyses/spec.js";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import { Network } from "../../src/engine/network/network.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { storeNetworks } from "../../src/app/networks.js";
import { ACCESS_CAR } from "../../src/engine/network/types.js";
import type { Store } from "../../src/app/ports/store.js";
import { randomOf, syntheticMatchedTrips } from "../../bench/lib/synthetic.js";
import { boxFeature } from "./zones.js";
import { MONACO_PBF } from "./bundled-data.js";

/** The Monaco network, read once per process. */
let monaco: Promise<Network> | null = null;
export const monacoNetwork = () =>
  (monaco ??= readOsmSegments(MONACO_PBF).then((segments) => new Network("mc", segments)));

/**
 * A store for analysis-shard tests: the Monaco network, `tripsPerMonth` synthetic matched trips (random
 * fastest car paths) in each of February to April 2025, appended in batches of `batch` trips so every
 * month has several chunks, from an odd number of devices per month (expansion weights like 10000/37,
 * which no binary fraction holds), and an organization with a 3 × 3 grid of district zones plus
 * pass-through zones on every 50th segment.
 */
export async function shardScenario(
  store: Store,
  { tripsPerMonth = 900, batch = 200 }: { tripsPerMonth?: number; batch?: number } = {},
) {
  const network = await monacoNetwork();
  await store.network.replaceCountry(
    { country: "mc", source: "test", segmentCount: network.size, importedAt: "" },
    network.segments,
  );
  const random = randomOf(7);
  for (const [month, devices] of [
    ["2025-02", 37],
    ["2025-03", 41],
    ["2025-04", 29],
  ] as const) {
    // Whole seconds plus odd milliseconds: durations that are no whole number of seconds.
    const trips = [
      ...syntheticMatchedTrips(network, tripsPerMonth, random, {
        startFrom: Date.parse(`${month}-01T00:00:00Z`),
        startSpanMs: 27 * 86_400_000,
        routesPerTree: 50,
        extraMsPerStep: 7,
        classCuts: [0.8, 0.93],
        deviceOf: (n) => `device-${n % devices}`,
      }),
    ];
    for (let i = 0; i < trips.length; i += batch)
      await store.trips.appendTrips("mc", trips.slice(i, i + batch));
  }
  const org = await store.accounts.createOrganization(`shards-${crypto.randomUUID()}`);
  const email = `planner-${org.id}@example.org`;
  await store.accounts.addUser(email, org.id);
  const networks = storeNetworks(store.network);
  const ctx = { store, networks, orgId: org.id };
  await createZoneSet(
    {
      insight_login_email: email,
      zone_set_name: "Districts",
      zones: { type: "FeatureCollection", features: [...districts(), ...passZones(network)] },
    },
    ctx,
  );
  /** A validated OD_Analysis of the scenario's months; `extra` adds or overrides request fields. */
  const spec = async (name: string, extra: Record<string, unknown> = {}): Promise<AnalysisSpec> =>
    await validateAnalysisRequest(
      {
        insight_login_email: email,
        analysis_name: name,
        analysis_type: "OD_Analysis",
        travel_mode_type: "All_Vehicles",
        output_type: "index",
        oz_sets: [{ name: "Districts" }],
        dz_sets: [{ name: "Districts" }],
        date_ranges: [{ start_date: "02/01/2025", end_date: "04/30/2025" }],
        day_types: "Average Day|17,Average Weekday|15,Average Weekend|67",
        day_parts: "All Day|0023,Peak AM|0609,Peak PM|1518",
        country: "mc",
        ...extra,
      },
      ctx,
    );
  return { network, networks, orgId: org.id, email, spec };
}

/** 3 × 3 boxes over Monaco and its neighbours. */
function districts() {
  const [w, s, e, n] = [7.37, 43.72, 7.45, 43.77];
  const dx = (e - w) / 3;
  const dy = (n - s) / 3;
  return Array.from({ length: 9 }, (_, i) => {
    const x = w + (i % 3) * dx;
    const y = s + Math.floor(i / 3) * dy;
    return boxFeature(`District ${i + 1}`, i + 1, [x, y, x + dx, y + dy]);
  });
}

/** Small pass-through boxes around every 50th car segment's start (pass rows, zone_counts). */
function passZones(network: Network) {
  const d = 0.0004;
  return network.segments
    .filter((s) => (s.access & ACCESS_CAR) !== 0)
    .filter((_, i) => i % 50 === 0)
    .slice(0, 20)
    .map((s, i) => {
      const [lon, lat] = s.coords[0];
      const zone = boxFeature(`Gate ${i + 1}`, 100 + i, [lon - d, lat - d, lon + d, lat + d]);
      return { ...zone, properties: { ...zone.properties, is_pass: 1 } };
    });
}
