import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateAnalysisRequest } from "../../src/domain/analyses/spec.js";
import { presetAreasOf } from "../../src/domain/preset-geographies.js";
import { createZoneSet } from "../../src/domain/zone-sets.js";
import { readAdminAreas } from "../../src/engine/network/admin-areas.js";
import { tripMatcher } from "../../src/engine/matching/index.js";
import type { Network } from "../../src/engine/network/network.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { Simulation, writeSimulation, type GroundTruthTrip } from "../../src/engine/simulate/index.js";
import { LocalClock, timeZoneOfCountry } from "../../src/engine/time.js";
import { destinationVisits, odPairs, originVisits, type TripPath } from "../../src/engine/zones/assign.js";
import { aggregateOd } from "../../src/jobs/od-metrics.js";
import { ZoneActivity } from "../../src/engine/analysis/zone-activity.js";
import type { Runtime } from "../../src/runtime.js";
import { ingestFiles } from "../../src/services/ingest.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { boxFeature } from "../helpers/zones.js";
import CheapRuler from "cheap-ruler";
import { endZonesAt, type CompiledZoneSet } from "../../src/engine/zones/compile.js";
import type { LonLat } from "../../src/engine/network/types.js";

const MONACO = new URL("../../data/osm/monaco.osm.pbf", import.meta.url).pathname;
const EMAIL = "planner@example.org";
const MARCH = new Set(Array.from({ length: 31 }, (_, i) => `2025-03-${String(i + 1).padStart(2, "0")}`));

/** Pair → trips, keyed "origin zone id→destination zone id". */
type PairCounts = Map<string, number>;

const add = (counts: PairCounts, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

/** A point whose zone changes within 15 m (any of eight directions): GPS noise may move it across. */
function ambiguous(set: CompiledZoneSet, p: LonLat): boolean {
  const here = endZonesAt(set, p).join();
  const ruler = new CheapRuler(p[1], "meters");
  return [0, 45, 90, 135, 180, 225, 270, 315].some(
    (bearing) => endZonesAt(set, ruler.destination(p, 15, bearing) as LonLat).join() !== here,
  );
}

/** How far two pair tallies differ in total, and the worst single pair. */
function compare(expected: PairCounts, got: PairCounts) {
  const pairs = [...new Set([...expected.keys(), ...got.keys()])];
  const diff = (k: string) => Math.abs((got.get(k) ?? 0) - (expected.get(k) ?? 0));
  const total = [...expected.values()].reduce((a, b) => a + b, 0);
  return {
    pairs,
    total,
    misplaced: pairs.reduce((sum, k) => sum + diff(k), 0),
    worst: pairs.filter((k) => diff(k) > Math.max(2, 0.1 * (expected.get(k) ?? 0))),
  };
}

/**
 * The analysis catalogue against the simulation's ground truth: one simulated month on the Monaco
 * network, ingested through the real splitter and matcher, with the extract's quarters and communes
 * imported as preset geographies.
 */
describe("analysis catalogue against the simulation's ground truth (Monaco, one month)", () => {
  const dir = mkdtempSync(join(tmpdir(), "sf-catalogue-truth-"));
  const store = new SqliteStore(":memory:");
  let network: Network;
  let truth: GroundTruthTrip[];
  let ctx: { store: SqliteStore; networks: NetworkRegistry; orgId: string };
  let rt: Runtime;

  before(async () => {
    const segments = await readOsmSegments(MONACO);
    await store.network.replaceCountry(
      { country: "mc", source: "test", segmentCount: segments.length, importedAt: "" },
      segments,
    );
    await store.presetAreas.replaceCountry("mc", presetAreasOf("mc", await readAdminAreas(MONACO)));
    rt = { dataDir: dir, store, networks: new NetworkRegistry(async (c) => await store.network.loadSegments(c)) };
    network = (await rt.networks.get("mc"))!;
    const sim = new Simulation(network, {
      from: "2025-03",
      to: "2025-03",
      tripsPerDay: 20,
      seed: 11,
      source: "lbs",
    });
    const trips = [...sim.trips()];
    truth = trips.map((t) => t.truth);
    const written = writeSimulation(trips, dir);
    await ingestFiles(rt, [written.months[0].traces], {
      ...{ country: "mc", source: "lbs", vehicleClass: "personal" },
      matcher: tripMatcher(network),
    });
    const org = await store.accounts.createOrganization("Planners");
    await store.accounts.addUser(EMAIL, org.id);
    ctx = { store, networks: rt.networks, orgId: org.id };
    await createZoneSet(
      {
        insight_login_email: EMAIL,
        zone_set_name: "Districts",
        zones: {
          type: "FeatureCollection",
          features: [
            boxFeature("West", 1, [7.37, 43.725, 7.405, 43.765]),
            boxFeature("East", 2, [7.405, 43.725, 7.44, 43.765]),
          ],
        },
      },
      ctx,
    );
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const compute = () => ({ store, networks: rt.networks, onProgress: () => {} });
  const request = (extra: Record<string, unknown>) => ({
    insight_login_email: EMAIL,
    travel_mode_type: "All_Vehicles",
    oz_sets: [{ name: "Districts" }],
    date_ranges: [{ start_date: "03/01/2025", end_date: "03/31/2025" }],
    day_types: "All Days|17",
    day_parts: "All Day|0023",
    country: "mc",
    ...extra,
  });

  const truePath = (t: GroundTruthTrip): TripPath => ({
    origin: t.origin,
    destination: t.destination,
    segments: t.route.map((s) => network.indexOfSegment(s.segmentId)!),
    forward: t.route.map((s) => (s.forward ? 1 : 0)),
  });
  /** The true trips an analysis of the travel mode counts: its vehicle classes, on March's local days. */
  const analysed = (classes: readonly string[]) => {
    const clock = new LocalClock(timeZoneOfCountry("mc"));
    return truth.filter((t) => classes.includes(t.vehicleClass) && MARCH.has(clock.at(t.startT).day));
  };

  it("OD_Preset_Geography: trips from each district to each quarter match the true trips", async (t) => {
    const spec = await validateAnalysisRequest(
      request({
        analysis_name: "To quarters",
        analysis_type: "OD_Preset_Geography",
        geography_type: "admin_10",
      }),
      ctx,
    );
    const agg = await aggregateOd(spec, compute());
    const [oz, dz] = [agg.origins.compiled, agg.destinations.compiled];
    assert.equal(dz.zones.length, 9, "Monaco's nine quarters");
    const expected: PairCounts = new Map();
    let nearBorder = 0;
    for (const trip of analysed(spec.vehicleClasses)) {
      const path = truePath(trip);
      const pairs = odPairs(originVisits(oz, path), destinationVisits(dz, path), false);
      for (const [o, d] of pairs) add(expected, `${oz.zones[o].id}→${dz.zones[d].id}`);
      if (pairs.length && (ambiguous(oz, trip.origin) || ambiguous(dz, trip.destination))) nearBorder++;
    }
    const got: PairCounts = new Map();
    for (const r of agg.rows)
      if (r.group === 0) got.set(`${oz.zones[r.origin].id}→${dz.zones[r.destination].id}`, r.sample);
    const { pairs, total, misplaced, worst } = compare(expected, got);
    t.diagnostic(
      `${pairs.length} pairs, ${total} true trips (${nearBorder} ending near a border), ${misplaced} counted off`,
    );
    assert.ok(total > 100 && pairs.length >= 10, "enough trips between enough pairs to mean something");
    assert.ok(nearBorder < 0.2 * total, "most trips end clear of the borders");
    // Matched trip ends are snapped GPS fixes (lbs: ~10 m noise): a trip ending within metres of a quarter
    // border can land in the neighbour, and Monaco's quarters are small, with favourite destinations near
    // their borders (one place visited often moves several trips together). A moved trip counts off twice
    // (gone from one pair, added to another); the bound lets half the near-border trips move, and a few
    // others (matcher splits). Measured (seed 11): 127 true trips, 25 within 15 m of a border, 11 counted
    // off (5 trips between La Condamine and Monte-Carlo).
    assert.ok(misplaced <= 0.03 * total + nearBorder, `${misplaced} of ${total} counted off`);
    assert.ok(worst.length <= 2, `pairs off by more than 10 %: ${worst.join(", ")}`);
  });

  it("Zone_Activity_Analysis: trips starting or ending in each district match the true trips", async (t) => {
    const spec = await validateAnalysisRequest(
      request({ analysis_name: "Activity", analysis_type: "Zone_Activity_Analysis" }),
      ctx,
    );
    const activity = new ZoneActivity();
    const agg = await aggregateOd({ ...spec, destinationSets: spec.originSets }, compute(), (seen) =>
      activity.add(seen),
    );
    const zones = agg.origins.compiled;
    const expected: PairCounts = new Map();
    let nearBorder = 0;
    for (const trip of analysed(spec.vehicleClasses)) {
      const path = truePath(trip);
      const met = new Set(
        [...originVisits(zones, path), ...destinationVisits(zones, path)].map((v) => v.zone),
      );
      for (const z of met) add(expected, String(zones.zones[z].id));
      if (met.size && (ambiguous(zones, trip.origin) || ambiguous(zones, trip.destination))) nearBorder++;
    }
    const got: PairCounts = new Map();
    for (const r of activity.rows(agg.aggregator.dayCounts()))
      if (r.group === 0) got.set(String(zones.zones[r.zone].id), r.sample);
    const { total, misplaced } = compare(expected, got);
    t.diagnostic(`${total} true zone visits (${nearBorder} trips near a border), ${misplaced} counted off`);
    assert.ok(total > 300, "enough trips to mean something");
    // A matched trip may be split in two (one more visit), and a snapped end within metres of the border at
    // 7.405° E can change district. Measured (seed 11): 513 true visits, 6 trips near the border, 1 off.
    assert.ok(misplaced <= 0.03 * total + nearBorder, `${misplaced} of ${total} counted off`);
  });
});
