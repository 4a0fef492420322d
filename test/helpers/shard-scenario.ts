import { type AnalysisSpec } from "../../src/domain/analyses/spec.js";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import { Network } from "../../src/engine/network/network.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { DijkstraWorkspace, pathTo, timeWeight } from "../../src/engine/network/routing.js";
import { ACCESS_CAR, type LonLat } from "../../src/engine/network/types.js";
import type { MatchedTrip, VehicleClass } from "../../src/engine/trips/types.js";
import type { Store } from "../../src/app/ports/store.js";
import { randomOf, type Random } from "../../bench/lib/synthetic.js";
import { boxFeature } from "./zones.js";

const MONACO = new URL("../../data/osm/monaco.osm.pbf", import.meta.url).pathname;

/** The Monaco network, read once per process. */
let monaco: Promise<Network> | null = null;
export const monacoNetwork = () =>
  (monaco ??= readOsmSegments(MONACO).then((segments) => new Network("mc", segments)));

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
    const trips = [
      ...syntheticTrips(network, tripsPerMonth, random, Date.parse(`${month}-01T00:00:00Z`), devices),
    ];
    for (let i = 0; i < trips.length; i += batch)
      await store.trips.appendTrips("mc", trips.slice(i, i + batch));
  }
  const org = await store.accounts.createOrganization(`shards-${crypto.randomUUID()}`);
  const email = `planner-${org.id}@example.org`;
  await store.accounts.addUser(email, org.id);
  const networks = new NetworkRegistry(async (c) => await store.network.loadSegments(c));
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

function* syntheticTrips(
  network: Network,
  count: number,
  random: Random,
  monthStart: number,
  devices: number,
): Generator<MatchedTrip> {
  const workspace = new DijkstraWorkspace(network);
  const weight = timeWeight(network);
  const car = (edge: number) => (network.segments[edge >> 1].access & ACCESS_CAR) !== 0;
  const nodeCount = network.graph.nodeCount;
  let made = 0;
  while (made < count) {
    workspace.run(Math.floor(random() * nodeCount), weight, { allowed: car });
    for (let k = 0; k < 50 && made < count; k++) {
      const edges = pathTo(network, workspace, Math.floor(random() * nodeCount));
      if (!edges || edges.length === 0) continue;
      yield tripAlong(network, edges, random, monthStart, `device-${made++ % devices}`);
    }
  }
}

function tripAlong(
  network: Network,
  edges: number[],
  random: Random,
  monthStart: number,
  deviceId: string,
): MatchedTrip {
  // Whole seconds plus odd milliseconds: durations that are no whole number of seconds.
  const startT = monthStart + Math.floor(random() * 27 * 86_400_000);
  let t = startT;
  let lengthM = 0;
  const path = edges.map((edge) => {
    const s = network.segments[edge >> 1];
    const enterT = t;
    t += Math.round((s.lengthM / (s.speedKph / 3.6)) * 1000) + 7;
    lengthM += s.lengthM;
    return { segmentId: s.id, forward: (edge & 1) === 0, enterT, exitT: t };
  });
  const endOf = (edge: number, atStart: boolean): LonLat => {
    const coords = network.segments[edge >> 1].coords;
    const forward = (edge & 1) === 0;
    return atStart === forward ? coords[0] : coords[coords.length - 1];
  };
  const r = random();
  const vehicleClass: VehicleClass =
    r < 0.8 ? "personal" : r < 0.93 ? "medium_commercial" : "heavy_commercial";
  return {
    deviceId,
    vehicleClass,
    source: vehicleClass === "personal" ? "lbs" : "telematics",
    origin: endOf(edges[0], true),
    destination: endOf(edges[edges.length - 1], false),
    startT,
    endT: t,
    lengthM,
    path,
  };
}
