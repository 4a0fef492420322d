import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AnalysisSpec } from "../../src/domain/analyses/spec.js";
import { validateAnalysisRequest } from "../../src/app/analyses/validate.js";
import { createZoneSet } from "../../src/app/zone-sets.js";
import type { Network } from "../../src/engine/network/network.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import type { GroundTruthTrip } from "../../src/engine/simulate/index.js";
import { LocalClock, timeZoneOfCountry } from "../../src/engine/time.js";
import { destinationVisits, odPairs, originVisits, type TripPath } from "../../src/engine/zones/assign.js";
import { aggregateOd } from "../../src/app/analyses/od-metrics.js";
import { ZoneActivity } from "../../src/engine/analysis/zone-activity.js";
import type { AppContext } from "../../src/app/context.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { boxFeature } from "../helpers/zones.js";
import { PLANNER_EMAIL, simulatedMonacoMonth } from "../helpers/simulated-month.js";
import CheapRuler from "cheap-ruler";
import { compileZoneSet, endZonesAt, type CompiledZoneSet } from "../../src/engine/zones/compile.js";
import { OdMfTally } from "../../src/engine/analysis/od-mf.js";
import { passedZones } from "../../src/engine/zones/assign.js";
import {
  analysedSegments,
  lookupOf,
  passageFinder,
  scanPassages,
  scanSegments,
  type AnalysedSegment,
} from "../../src/app/analyses/segment-metrics.js";
import {
  NetworkPerformanceTally,
  type PerformanceRow,
} from "../../src/engine/analysis/network-performance.js";
import { networkOdPair, NetworkOdTally } from "../../src/engine/analysis/network-od.js";
import type { SegmentPassage } from "../../src/engine/analysis/segment-analysis.js";
import { computeAadtMetrics } from "../../src/app/analyses/aadt-metrics.js";
import { vendorOptionsOf } from "../../src/domain/analyses/vendor-options.js";
import { expansionFactor } from "../../src/engine/expansion.js";
import type { LonLat } from "../../src/engine/network/types.js";
import {
  computeTopRoutesMetrics,
  ROUTES_RESULT,
  type StoredRoutes,
} from "../../src/app/analyses/top-routes-metrics.js";
import { ROUTE_OVERLAP_SHARE, TopRoutesTally } from "../../src/engine/analysis/top-routes.js";

const EMAIL = PLANNER_EMAIL;
const MARCH = new Set(Array.from({ length: 31 }, (_, i) => `2025-03-${String(i + 1).padStart(2, "0")}`));

const MOTOR = ["personal", "medium_commercial", "heavy_commercial"];
const MAIN_ROADS = ["trunk", "primary", "secondary", "tertiary"];

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
  let rt: AppContext;
  let busyWays: number[];

  before(async () => {
    const month = await simulatedMonacoMonth(store, dir, { tripsPerDay: 20, seed: 11, presets: true });
    ({ rt, network, ctx } = month);
    truth = month.trips.map((t) => t.truth);
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
    // A pass-through strip across the district border: the middle filter and the AADT zone.
    const border = boxFeature("Border", 3, [7.4035, 43.725, 7.4065, 43.765]);
    await createZoneSet(
      {
        insight_login_email: EMAIL,
        zone_set_name: "Border",
        zones: {
          type: "FeatureCollection",
          features: [{ ...border, properties: { ...border.properties, is_pass: 1 } }],
        },
      },
      ctx,
    );
    await createZoneSet(
      {
        insight_login_email: EMAIL,
        zone_set_name: "Centre",
        zones: {
          type: "FeatureCollection",
          features: [boxFeature("Centre", 4, [7.415, 43.73, 7.43, 43.745])],
        },
      },
      ctx,
    );
    // The eight busiest main-road OSM ways (most true car and truck passages): Network_Performance and
    // Network_OD line zones.
    const passes = new Map<number, number>();
    for (const trip of truth.filter((t) => MOTOR.includes(t.vehicleClass)))
      for (const step of trip.route) {
        const seg = network.segmentById(step.segmentId)!;
        if (MAIN_ROADS.includes(seg.roadClass)) passes.set(seg.wayId, (passes.get(seg.wayId) ?? 0) + 1);
      }
    busyWays = [...passes]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, 8)
      .map(([way]) => way);
    await createZoneSet({ insight_login_email: EMAIL, zone_set_name: "Busy roads", osm_ids: busyWays }, ctx);
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
    assert.ok(nearBorder < 0.25 * total, "most trips end clear of the borders");
    // Matched trip ends are snapped GPS fixes (lbs: ~10 m noise): a trip ending within metres of a quarter
    // border can land in the neighbour, and Monaco's quarters are small, with favourite destinations near
    // their borders (one place visited often moves several trips together). A moved trip counts off twice
    // (gone from one pair, added to another); the bound lets half the near-border trips move, and a few
    // others (matcher splits). Measured (seed 11): 107 true trips, 22 within 15 m of a border, 6 counted
    // off (before the generator's congestion by road class: 127, 25, 11).
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
    // 7.405° E can change district. Measured (seed 11): 450 true visits, 2 trips near the border, 3 off.
    assert.ok(misplaced <= 0.03 * total + nearBorder, `${misplaced} of ${total} counted off`);
  });

  it("OD_MF_Analysis: trips from a district across the border strip to the other match the true trips", async (t) => {
    const spec = await validateAnalysisRequest(
      request({
        analysis_name: "Across",
        analysis_type: "OD_MF_Analysis",
        mf_sets: [{ name: "Border" }],
        dz_sets: [{ name: "Districts" }],
      }),
      ctx,
    );
    const tally = new OdMfTally({ origins: 2, middles: 1, destinations: 2 });
    const combined = {
      ...spec,
      originSets: [...spec.originSets, ...spec.middleFilterSets!],
      destinationSets: [...spec.destinationSets, ...spec.middleFilterSets!],
    };
    const agg = await aggregateOd(combined, compute(), (seen) => tally.add(seen));
    const [oz, both] = [agg.origins.compiled, agg.origins.compiled];
    const expected: PairCounts = new Map();
    for (const trip of analysed(spec.vehicleClasses)) {
      const path = truePath(trip);
      const origins = originVisits(oz, path).filter((v) => v.zone < 2);
      const middles = passedZones(both, path).filter((v) => v.zone === 2);
      const destinations = destinationVisits(oz, path).filter((v) => v.zone < 2);
      for (const o of origins)
        for (const m of middles)
          for (const d of destinations)
            if (o.position < m.position && m.position < d.position) add(expected, `${o.zone}→${d.zone}`);
    }
    const got: PairCounts = new Map();
    for (const r of tally.rows()) if (r.group === 0) got.set(`${r.origin}→${r.destination}`, r.sample);
    const { total, misplaced } = compare(expected, got);
    t.diagnostic(
      `${total} true trips across the border strip (${[...expected].join(", ")}), ${misplaced} counted off`,
    );
    assert.ok(total > 30, "enough trips cross the border to mean something");
    // Matched paths are the ingest's, true paths the simulator's: measured (seed 11) 38 true trips
    // (West → East 18, East → West 7, and trips crossing and coming back: West 13), 0 off.
    assert.ok(expected.has("0→1") && expected.has("1→0"), "trips cross both ways");
    assert.ok(misplaced <= 0.05 * total, `${misplaced} of ${total} counted off`);
  });

  it("Segment_Analysis: trips on each busy segment of a polygon match the true routes", async (t) => {
    const spec = await validateAnalysisRequest(
      request({
        analysis_name: "Segments",
        analysis_type: "Segment_Analysis",
        oz_sets: [{ name: "Centre" }],
      }),
      ctx,
    );
    const set = (await store.zoneSets.get(ctx.orgId, "Centre"))!;
    const segments = analysedSegments(
      set.featureCollection.features,
      network,
      vendorOptionsOf(spec).segmentTypes.map((c) => c.toLowerCase()),
    );
    const { tally } = await scanSegments(spec, compute(), network, segments);
    const expected: PairCounts = new Map();
    const wanted = new Map(segments.map((s, i) => [network.segments[s.parts[0]].id, i]));
    for (const trip of analysed(spec.vehicleClasses))
      for (const id of new Set(trip.route.map((s) => s.segmentId)))
        if (wanted.has(id)) add(expected, String(wanted.get(id)));
    const got: PairCounts = new Map();
    for (const r of tally.rows(null)) if (r.group === 0) got.set(String(r.segment), r.sample);
    // Busy segments: those at least 20 true trips travel (the map-matcher's choice between parallel
    // lanes of a quiet street says little).
    const busy = [...expected].filter(([, n]) => n >= 20).map(([k]) => k);
    const sub = (m: PairCounts) => new Map(busy.map((k) => [k, m.get(k) ?? 0]));
    const { total, misplaced } = compare(sub(expected), sub(got));
    t.diagnostic(
      `${segments.length} segments in the polygon, ${busy.length} busy: ${total} true passages, ${misplaced} counted off`,
    );
    assert.ok(busy.length >= 10 && total > 300, "enough busy segments to mean something");
    // Measured (seed 11): 831 segments, 219 busy, 8,693 true passages, 276 off (3.2 %): the matcher
    // sometimes takes a parallel street or a trip's end segment differs.
    assert.ok(misplaced <= 0.06 * total, `${misplaced} of ${total} counted off`);
  });

  it("AADT: the border strip's average day (mean of weekday averages) matches the true trips", async (t) => {
    const spec = await validateAnalysisRequest(
      request({
        analysis_name: "Border AADT",
        analysis_type: "AADT",
        oz_sets: [{ name: "Border" }],
        az_sets: [{ name: "Border" }],
        aadt_year: 2025,
      }),
      ctx,
    );
    const metrics = await computeAadtMetrics(spec, compute());
    const aadt = Number(metrics.aadt_all.split("\n")[1].split(",")[6]);
    const border = compileZoneSet(
      (await store.zoneSets.get(ctx.orgId, "Border"))!.featureCollection.features,
      network,
    );
    const clock = new LocalClock(timeZoneOfCountry("mc"));
    const perDay = new Map<string, number>();
    for (const trip of truth)
      perDay.set(clock.at(trip.startT).day, perDay.get(clock.at(trip.startT).day) ?? 0);
    for (const trip of analysed(spec.vehicleClasses))
      if (passedZones(border, truePath(trip)).length) {
        const day = clock.at(trip.startT).day;
        perDay.set(day, (perDay.get(day) ?? 0) + 1);
      }
    const byWeekday = new Map<number, number[]>();
    for (const [day, n] of perDay) {
      if (!MARCH.has(day)) continue;
      const w = clock.at(Date.parse(`${day}T12:00:00Z`)).weekday;
      byWeekday.set(w, [...(byWeekday.get(w) ?? []), n]);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const trueAadt = mean([...byWeekday.values()].map(mean));
    const factor = expansionFactor((await store.tripStats.devicesByMonth("mc")).get("2025-03"));
    t.diagnostic(
      `true average day ${trueAadt.toFixed(1)} trips, computed ${(aadt / factor).toFixed(1)} (× ${factor.toFixed(1)})`,
    );
    // Measured (seed 11): 3.4 true trips a day, 3.4 computed (≈ 105 trips over the month).
    assert.ok(trueAadt > 2, "enough trips cross the strip to mean something");
    assert.ok(Math.abs(aadt / factor - trueAadt) <= 0.05 * trueAadt + 0.5, `${aadt / factor} vs ${trueAadt}`);
  });

  /** The analysed line zones of a set (each an OSM way's network segments). */
  const lineZones = async (name: string) =>
    analysedSegments((await store.zoneSets.get(ctx.orgId, name))!.featureCollection.features, network, []);

  /**
   * A true trip's passages over the analysed segments, built as the analysis builds them from a matched
   * path (its steps' lengths and times summed, entered at the first), the first and last steps counting
   * only the stretch truly travelled: from the origin, to the destination.
   */
  const truePassages = (trip: GroundTruthTrip, segments: AnalysedSegment[]) => {
    const lookup = lookupOf(segments, network);
    const met = new Map<number, SegmentPassage>();
    trip.route.forEach((step, k) => {
      const index = network.indexOfSegment(step.segmentId)!;
      const lengthM = network.travelledM(
        network.segments[index],
        step.forward,
        k === 0 ? trip.origin : null,
        k === trip.route.length - 1 ? trip.destination : null,
      );
      const ms = step.exitT - step.enterT;
      for (const segment of lookup.get(index)?.[step.forward ? 1 : 0] ?? []) {
        const seen = met.get(segment);
        if (seen) Object.assign(seen, { lengthM: seen.lengthM + lengthM, ms: seen.ms + ms });
        else met.set(segment, { segment, enterT: step.enterT, lengthM, ms });
      }
    });
    return [...met.values()];
  };

  /** Matched passages of the analysis' trips, as Network_Performance finds them. */
  const matchedPassages = async (spec: AnalysisSpec, segments: AnalysedSegment[]) => {
    const out: SegmentPassage[][] = [];
    const finder = passageFinder(spec, network, segments);
    await scanPassages(spec, compute(), network, finder, (met) => void out.push(met));
    return out;
  };

  it("Network_Performance: speeds per busy road and local hour match the generator's true speeds", async (t) => {
    const spec = await validateAnalysisRequest(
      request({
        analysis_name: "Performance",
        analysis_type: "Network_Performance",
        oz_sets: [{ name: "Busy roads" }],
      }),
      ctx,
    );
    const segments = await lineZones("Busy roads");
    const clock = new LocalClock(timeZoneOfCountry("mc"));
    // Weekdays only, by local hour of entering; a trip's first and last segments count too, for the stretch
    // travelled (from the snapped origin, to the snapped destination).
    const tally = (trips: SegmentPassage[][]) => {
      const out = new NetworkPerformanceTally();
      for (const passages of trips)
        for (const p of passages) {
          const local = clock.at(p.enterT);
          if (local.weekday <= 5 && MARCH.has(local.day))
            out.add(p, { weight: 1, groups: [0] }, { dayTypes: [0], period: local.hour, hour: local.hour });
        }
      return out;
    };
    const expected = tally(analysed(spec.vehicleClasses).map((trip) => truePassages(trip, segments)));
    const got = tally(await matchedPassages(spec, segments));
    const key = (r: PerformanceRow) => `${r.segment}|${r.period}`;
    const gotRows = new Map(got.rows([50]).map((r) => [key(r), r]));
    // Cells with at least 5 true passages: the mean speed of fewer says little.
    const cells = expected
      .rows([50])
      .filter((r) => r.sample >= 5)
      .map((r) => ({ truth: r, got: gotRows.get(key(r)) }));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const errors = cells.map((c) => Math.abs((c.got?.avgSpeedMs ?? 0) / c.truth.avgSpeedMs - 1));
    const meanError = mean(errors);
    const medianError = mean(
      cells.map((c) => Math.abs((c.got?.percentilesMs[0] ?? 0) / c.truth.percentilesMs[0] - 1)),
    );
    // Pooled over the roads: weekday rush hours (local 08-09 h, 17-19 h) against the night (22-05 h).
    const pooled = (rows: PerformanceRow[], hours: number[]) => {
      const sel = rows.filter((r) => hours.includes(r.period));
      return sel.reduce((a, r) => a + r.avgSpeedMs * r.sample, 0) / sel.reduce((a, r) => a + r.sample, 0);
    };
    const [PEAK, NIGHT] = [
      [8, 9, 17, 18, 19],
      [22, 23, 0, 1, 2, 3, 4, 5],
    ];
    const ratio = (tl: NetworkPerformanceTally) => pooled(tl.rows([50]), PEAK) / pooled(tl.rows([50]), NIGHT);
    const freeFlow = segments.map((_, i) => [expected.freeFlow(i), got.freeFlow(i)]);
    const flowErrors = freeFlow.filter(([e, g]) => e && g).map(([e, g]) => Math.abs(g! / e! - 1));
    t.diagnostic(
      `${segments.length} ways, ${cells.length} way-hours with ≥ 5 true passages ` +
        `(${cells.reduce((a, c) => a + c.truth.sample, 0)} passages): mean speed error ` +
        `${(100 * meanError).toFixed(1)} %, worst ${(100 * Math.max(...errors)).toFixed(1)} %, ` +
        `median speed (p50) ${(100 * medianError).toFixed(1)} %; ` +
        `peak/night speed true ${ratio(expected).toFixed(2)}, computed ${ratio(got).toFixed(2)}; ` +
        `free flow on ${flowErrors.length} ways, mean error ${(100 * (flowErrors.reduce((a, b) => a + b, 0) / flowErrors.length)).toFixed(1)} %`,
    );
    // Measured (seed 11): 8 ways, 52 way-hours (356 passages), mean speed error 5.8 %, worst 19.0 %, p50 5.9 %;
    // peak/night 0.71 true, 0.74 computed; free flow 9.0 % off on average (lbs fixes ~30 s apart: a
    // matched step's times are interpolated between fixes, so a single passage's speed is rough).
    assert.ok(cells.length >= 20, "enough busy way-hours to mean something");
    assert.ok(ratio(expected) < 0.8, "the generator slows the main roads at the rush hours");
    assert.ok(ratio(got) < 0.8, "so do the computed speeds");
    assert.ok(Math.abs(ratio(got) - ratio(expected)) < 0.1, "by about as much");
    assert.ok(meanError < 0.1, `mean speed error ${meanError}`);
    assert.ok(medianError < 0.15, `median speed error ${medianError}`);
  });

  it("Network_OD: first and last busy road of each trip match the true routes", async (t) => {
    const spec = await validateAnalysisRequest(
      request({
        analysis_name: "Road to road",
        analysis_type: "Network_OD",
        oz_sets: [{ name: "Busy roads" }],
        dz_sets: [{ name: "Busy roads" }],
      }),
      ctx,
    );
    const ways = await lineZones("Busy roads");
    const both = [...ways, ...ways];
    const clock = new LocalClock(timeZoneOfCountry("mc"));
    const tally = (trips: SegmentPassage[][]) => {
      const out = new NetworkOdTally();
      for (const passages of trips) {
        const pair = networkOdPair(passages, ways.length);
        if (pair && MARCH.has(clock.at(pair.enterT).day))
          out.add(pair, { weight: 1, groups: [0] }, { dayTypes: [0], dayParts: [0] });
      }
      return out.rows((w) => w);
    };
    const expected = tally(analysed(spec.vehicleClasses).map((trip) => truePassages(trip, both)));
    const got = tally(await matchedPassages(spec, both));
    const counts = (rows: ReturnType<typeof tally>) =>
      new Map(rows.map((r) => [`${r.origin}→${r.destination}`, r.sample]));
    const { pairs, total, misplaced, worst } = compare(counts(expected), counts(got));
    const minutes = new Map(got.map((r) => [`${r.origin}→${r.destination}`, r.avgDurationMin]));
    const timed = expected.filter((r) => r.sample >= 5 && r.origin !== r.destination);
    const timeOff = timed.filter(
      (r) => Math.abs((minutes.get(`${r.origin}→${r.destination}`) ?? -9) - r.avgDurationMin) > 1,
    );
    t.diagnostic(
      `${pairs.length} pairs, ${total} true trips, ${misplaced} counted off; ` +
        `${timed.length} pairs of ≥ 5 trips between different roads, ${timeOff.length} with the mean time off by > 1 min`,
    );
    // Measured (seed 11): 44 pairs, 341 true trips, 4 counted off; 11 timed pairs, none off by > 1 min.
    assert.ok(total > 200 && pairs.length >= 10, "enough trips between enough roads to mean something");
    assert.ok(misplaced <= 0.05 * total, `${misplaced} of ${total} counted off`);
    assert.ok(worst.length <= 2, `pairs off by more than 10 %: ${worst.join(", ")}`);
    assert.ok(timeOff.length <= 0.1 * timed.length, `${timeOff.length} of ${timed.length} pair times off`);
  });

  it("Top_Routes_OD and _ZA: the top route of each busy pair (zone) is the most used true route", async (t) => {
    // Nine boxes, 3 × 3 over the simulated area.
    const [w, south, e, n] = [7.37, 43.725, 7.44, 43.765];
    const cells = [0, 1, 2].flatMap((r) =>
      [0, 1, 2].map((c) =>
        boxFeature(`Cell ${r}${c}`, r * 3 + c + 1, [
          w + ((e - w) * c) / 3,
          south + ((n - south) * r) / 3,
          w + ((e - w) * (c + 1)) / 3,
          south + ((n - south) * (r + 1)) / 3,
        ]),
      ),
    );
    await createZoneSet(
      {
        insight_login_email: EMAIL,
        zone_set_name: "Cells",
        zones: { type: "FeatureCollection", features: cells },
      },
      ctx,
    );
    const zones = compileZoneSet(
      (await store.zoneSets.get(ctx.orgId, "Cells"))!.featureCollection.features,
      network,
    );
    const signed = (s: { segment: number; forward: boolean }) =>
      (s.forward ? 1 : -1) * network.segments[s.segment].id;
    const lengthOf = (ids: number[]) =>
      [...new Set(ids)].reduce(
        (sum, id) => sum + network.segments[network.indexOfSegment(Math.abs(id))!].lengthM,
        0,
      );
    /** Shared length of two routes (signed segment ids) over the longer one's length. */
    const overlap = (a: number[], b: number[]) => {
      const inB = new Set(b);
      return lengthOf([...new Set(a)].filter((id) => inB.has(id))) / Math.max(lengthOf(a), lengthOf(b));
    };

    for (const type of ["Top_Routes_OD", "Top_Routes_ZA"] as const) {
      const byZone = type === "Top_Routes_ZA";
      const spec = await validateAnalysisRequest(
        request({
          analysis_name: `Cell routes ${type}`,
          analysis_type: type,
          oz_sets: [{ name: "Cells" }],
          dz_sets: [{ name: "Cells" }],
          top_routes_count: 1,
        }),
        ctx,
      );
      const metrics = await computeTopRoutesMetrics(spec, compute());
      const stored = JSON.parse(metrics[ROUTES_RESULT]) as StoredRoutes;
      // Computed top route per subject ("origin id→destination id", or the zone id): its signed steps
      // (records: route, then origin id and name, destination id and name; or zone id and name).
      const computed = new Map<string, number[]>();
      for (const [route, ...ids] of stored.records)
        computed.set(byZone ? String(ids[0]) : `${ids[0]}→${ids[2]}`, stored.routes[String(route)]);
      // The same grouping over the simulator's true paths, with the same zone assignment.
      const truth = new TopRoutesTally((i) => network.segments[i].lengthM, 2);
      const subjects: string[] = [];
      for (const trip of analysed(spec.vehicleClasses)) {
        const path = truePath(trip);
        const [origins, destinations] = [originVisits(zones, path), destinationVisits(zones, path)];
        const keys = byZone
          ? [...new Set([...origins, ...destinations].map((v) => String(zones.zones[v.zone].id)))]
          : odPairs(origins, destinations, true).map(([o, d]) => `${zones.zones[o].id}→${zones.zones[d].id}`);
        for (const k of keys) if (!subjects.includes(k)) subjects.push(k);
        truth.add(
          keys.map((k) => subjects.indexOf(k)),
          { ...path, startT: trip.startT, endT: trip.endT, weight: 1, groups: [0] },
          { dayTypes: [0], dayParts: [0] },
        );
      }
      const rows = truth.rows();
      // Busy subjects: at least 10 true trips (intrazonal pairs too: their trips have routes as well).
      // A clear leader: its true top route has at least 2 trips more than the next.
      const busy = rows.filter((r) => r.rank === 1 && r.subjectWeight >= 10);
      const runnerUp = (r: (typeof rows)[number]) =>
        rows.find((x) => x.subject === r.subject && x.rank === 2)?.sample ?? 0;
      const shares = busy.map((r) => {
        const got = computed.get(subjects[r.subject]);
        return got ? overlap(got, truth.routePath(r.route).map(signed)) : 0;
      });
      const clear = busy.flatMap((r, i) => (r.sample - runnerUp(r) >= 2 ? [shares[i]] : []));
      const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
      t.diagnostic(
        `${type}: ${busy.length} busy, top route overlaps the true one by ≥ 80 % in ` +
          `${shares.filter((s) => s >= ROUTE_OVERLAP_SHARE).length} (clear leaders ` +
          `${clear.filter((s) => s >= ROUTE_OVERLAP_SHARE).length} of ${clear.length}), mean ` +
          `${(100 * mean).toFixed(1)} %: ${busy.map((r, i) => `${subjects[r.subject]} ${(100 * shares[i]).toFixed(0)} %`).join(", ")}`,
      );
      // Measured (seed 11): OD 6 busy pairs, all 6 top routes overlap the true one by ≥ 80 % (92–100 %,
      // mean 97.7 %); ZA 7 busy zones, all 7 (92–100 %, mean 97.6 %). An earlier simulation gave a near tie
      // (4 true trips against 3 and 3) whose top route overlapped 76 %: hence the looser bounds below.
      assert.ok(busy.length >= 5, "enough busy pairs (zones) to mean something");
      assert.ok(clear.length >= 3, "enough clear leaders to mean something");
      assert.ok(
        clear.every((s) => s >= ROUTE_OVERLAP_SHARE),
        "every clear leader is found",
      );
      assert.ok(mean >= 0.8, `mean overlap ${mean}`);
    }
  });
});
