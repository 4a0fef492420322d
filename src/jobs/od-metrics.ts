import type { AnalysisSpec } from "../domain/analyses/spec.js";
import { monthlyExpansion } from "../domain/expansion.js";
import { networkTimeZone } from "../domain/network-time-zone.js";
import { OdAggregator, type OdRow } from "../engine/analysis/od-aggregate.js";
import { OD_IDENTITY_COLUMNS, odCsv, odIdentity, type OdLabels } from "../engine/analysis/od-csv.js";
import {
  distributionCsv,
  distributionMetrics,
  OdDistributions,
  type DistributionOptions,
} from "../engine/analysis/od-distributions.js";
import { toCsv } from "../engine/analysis/csv.js";
import { CalibrationCounter, type CalibrationZone } from "../engine/analysis/od-calibration.js";
import { TripView } from "../engine/analysis/trip-view.js";
import type { Network } from "../engine/network/network.js";
import { daysBetween, LocalClock, monthKey } from "../engine/time.js";
import { compileZoneSet, type CompiledZoneSet, type ZoneDef } from "../engine/zones/compile.js";
import { VEHICLE_CLASSES, type VehicleClass } from "../engine/trips/types.js";
import type { Store, ZoneFeature } from "../store/types.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";

/** Device-type groups of the OD metrics; a trip counts in every group its vehicle class belongs to. */
const GROUPS = [
  {
    name: "All Vehicles",
    classes: ["personal", "medium_commercial", "heavy_commercial", "bicycle", "pedestrian"],
  },
  { name: "Personal", classes: ["personal"] },
  { name: "Commercial", classes: ["medium_commercial", "heavy_commercial"] },
  { name: "Medium Commercial", classes: ["medium_commercial"] },
  { name: "Heavy Commercial", classes: ["heavy_commercial"] },
] as const;
const ALL = 0;
const PERSONAL = 1;
const COMMERCIAL = 2;

/** Which groups each vehicle class (by its code in the trip store) counts in. */
const GROUPS_OF_CLASS: number[][] = VEHICLE_CLASSES.map((c) =>
  GROUPS.flatMap((g, i) => ((g.classes as readonly string[]).includes(c) ? [i] : [])),
);

/** How the all-traffic metric names its device type for single-mode analyses. */
function allGroupName(spec: AnalysisSpec): string {
  const only = (c: VehicleClass) => spec.vehicleClasses.length === 1 && spec.vehicleClasses[0] === c;
  if (only("bicycle")) return "Bicycle";
  if (only("pedestrian")) return "Pedestrian";
  if (spec.travelMode === "Truck") return "Truck";
  return GROUPS[ALL].name;
}

interface ZoneSide {
  features: ZoneFeature[];
  /** Per feature: `<set uuid>#<index in the set>`, the same zone whichever side lists it. */
  keys: string[];
  compiled: CompiledZoneSet;
}

function loadSide(
  store: Store,
  spec: AnalysisSpec,
  refs: AnalysisSpec["originSets"],
  network: Network,
): ZoneSide {
  const sets = refs.map((ref) => {
    const set = store.zoneSets.get(spec.orgId, ref.uuid);
    if (!set)
      throw new Error(`zone set "${ref.name}" was deleted after the analysis was created; create it again`);
    return set;
  });
  const features = sets.flatMap((set) => set.featureCollection.features);
  const keys = sets.flatMap((set) => set.featureCollection.features.map((_, i) => `${set.uuid}#${i}`));
  return { features, keys, compiled: compileZoneSet(features, network) };
}

/**
 * OD_Preset_Geography's destinations: the areas of the preset geography as end zones. An area's
 * zone id is its numeric area id (the postal code, or the OSM relation id), its name the area's.
 */
function presetSide(store: Store, country: string, geographyType: string, network: Network): ZoneSide {
  const areas = store.presetAreas.list(country, geographyType);
  if (areas.length === 0)
    throw new Error(
      `the preset geography "${geographyType}" of "${country}" has no areas; import the network again`,
    );
  const features: ZoneFeature[] = areas.map((a) => ({
    type: "Feature",
    geometry: a.geometry,
    properties: {
      id: /^\d+$/.test(a.areaId) ? Number(a.areaId) : a.osmId,
      name: a.name ?? a.areaId,
      is_pass: 0,
    },
  }));
  const keys = areas.map((a) => `preset:${geographyType}:${a.areaId}`);
  return { features, keys, compiled: compileZoneSet(features, network) };
}

const sameSets = (a: AnalysisSpec["originSets"], b: AnalysisSpec["originSets"]) =>
  a.length === b.length && a.every((r, i) => r.uuid === b[i].uuid);

/** Months to scan: one either side of the ranges, as trips are filed by UTC month but sliced by local day. */
function scanMonths(spec: AnalysisSpec) {
  const days = spec.dateRanges.flatMap((r) => [r.startDay, r.endDay]).sort();
  const shift = (day: string, months: number) => {
    const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
    d.setUTCMonth(d.getUTCMonth() + months);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1 };
  };
  return { fromMonth: shift(days[0], -1), toMonth: shift(days[days.length - 1], 1) };
}

/** An OD_Analysis' trips summed per cell, before the cells become CSV rows. */
export interface OdAggregation {
  aggregator: OdAggregator;
  origins: ZoneSide;
  destinations: ZoneSide;
  /** Origin and destination sets are the same sets (intrazonal pairs, one zone_od_all side). */
  same: boolean;
  /** Cells with trips; `sample` is the raw number of stored trips behind each, before averaging per day. */
  rows: OdRow[];
  /** Per device group: the calibration scale of volume output; undefined for index output. */
  scale: number[] | undefined;
  distributions: OdDistributions;
  options: DistributionOptions;
}

/**
 * Scans the stored trips of an OD_Analysis into its cells. computeOdMetrics
 * formats the result; ground-truth tests and diagnostics read the raw sample
 * counts per pair from `rows`, which the CSVs only show averaged and rounded.
 */
export function aggregateOd(spec: AnalysisSpec, ctx: ComputeContext): OdAggregation {
  const network = ctx.networks.get(spec.country);
  if (!network) throw new Error(`no road network is imported for country "${spec.country}"`);
  const origins = loadSide(ctx.store, spec, spec.originSets, network);
  const preset = spec.options?.geographyType;
  const same = preset === undefined && sameSets(spec.originSets, spec.destinationSets);
  const destinations = same
    ? origins
    : preset !== undefined
      ? presetSide(ctx.store, spec.country, preset, network)
      : loadSide(ctx.store, spec, spec.destinationSets, network);
  const aggregator = new OdAggregator(
    origins.compiled,
    destinations.compiled,
    same,
    {
      dayTypes: spec.dayTypes.map((d) => ({ weekdays: range(d.start, d.end) })),
      dayParts: spec.dayParts.map((p) => ({ startHour: p.start, endHour: p.end })),
      dateSpans: spec.dateRanges.map((r) => ({ from: r.startDay, to: r.endDay })),
    },
    new LocalClock(networkTimeZone(ctx.store, spec.country)),
  );
  const options = distributionOptions(spec, network);
  const distributions = new OdDistributions(options);
  const attributes = spec.tripAttributes || spec.travelerAttributes;
  const calibration =
    spec.outputType === "volume"
      ? new CalibrationCounter(calibrationZones(spec, origins, same ? null : destinations), GROUPS.length)
      : null;
  if (attributes || calibration)
    aggregator.observer = (seen) => {
      if (attributes) distributions.add(seen);
      calibration?.add(seen);
    };
  scanTrips(spec, ctx, network, aggregator);
  const scale = calibration ? volumeFactors(spec, calibration) : undefined;
  const rows = aggregator.rows(GROUPS.length, scale);
  return { aggregator, origins, destinations, same, rows, scale, distributions, options };
}

/**
 * Origin-destination metrics of an OD_Analysis from the stored trips:
 * od_all, od_pers / od_comm where the travel mode has those vehicles, zone_od_all,
 * and the trip- and traveler-attribute distributions when asked for.
 */
export function computeOdMetrics(spec: AnalysisSpec, ctx: ComputeContext): MetricCsvs {
  const { aggregator, origins, destinations, same, rows, scale, distributions, options } = aggregateOd(
    spec,
    ctx,
  );
  const labels: OdLabels = {
    groups: [allGroupName(spec), ...GROUPS.slice(1).map((g) => g.name)],
    origins: origins.compiled.zones,
    destinations: destinations.compiled.zones,
    dayTypes: spec.dayTypes.map((d) => d.label),
    dayParts: spec.dayParts.map((p) => p.label),
  };
  const metrics: MetricCsvs = {
    od_all: odCsv(
      rows.filter((r) => r.group === ALL),
      labels,
    ),
  };
  const has = (c: VehicleClass) => spec.vehicleClasses.includes(c);
  if (has("personal") && spec.vehicleClasses.length > 1)
    metrics.od_pers = odCsv(
      rows.filter((r) => r.group === PERSONAL),
      labels,
    );
  if (has("medium_commercial") || has("heavy_commercial")) {
    // Truck analyses also split commercial traffic into medium and heavy vehicles.
    const wanted = spec.travelMode === "Truck" ? [COMMERCIAL, 3, 4] : [COMMERCIAL];
    metrics.od_comm = odCsv(
      rows.filter((r) => wanted.includes(r.group)),
      labels,
    );
  }
  metrics.zone_od_all = zoneCsv(aggregator, labels, same, scale);
  if (spec.tripAttributes || spec.travelerAttributes)
    Object.assign(metrics, distributionCsvs(spec, options, distributions, rows, labels));
  return metrics;
}

/** The trip- and traveler-attribute metrics asked for, one row per all-traffic row of od_all. */
function distributionCsvs(
  spec: AnalysisSpec,
  options: DistributionOptions,
  distributions: OdDistributions,
  rows: OdRow[],
  labels: OdLabels,
): MetricCsvs {
  const { trip, traveler } = distributionMetrics(options, spec.unit);
  const wanted = { ...(spec.tripAttributes ? trip : {}), ...(spec.travelerAttributes ? traveler : {}) };
  const slices = rows
    .filter((r) => r.group === ALL)
    .map((r) => ({
      identity: odIdentity(r, labels),
      stats: distributions.statsAt(r.dayType, r.dayPart, r.origin, r.destination)!,
    }));
  const out: MetricCsvs = {};
  for (const [name, metric] of Object.entries(wanted))
    out[name] = distributionCsv(OD_IDENTITY_COLUMNS, slices, metric);
  return out;
}

const METRES_PER_UNIT = { miles: 1609.344, km: 1000 };

function distributionOptions(spec: AnalysisSpec, network: Network): DistributionOptions {
  return {
    bins: spec.bins,
    metresPerUnit: METRES_PER_UNIT[spec.unit],
    percentiles: spec.speedPercentiles,
    distanceM: (a, b) => network.ruler.distance(a, b),
  };
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * The expansion factor of a trip's UTC month. Chunks come in month order, so the
 * last month's bounds are kept and a date is formatted only when the month changes.
 */
function weightByUtcMonth(factorOf: (month: string) => number): (t: number) => number {
  let from = Infinity;
  let to = -Infinity;
  let factor = 1;
  return (t) => {
    if (t < from || t >= to) {
      const d = new Date(t);
      from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
      to = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
      factor = factorOf(d.toISOString().slice(0, 7));
    }
    return factor;
  };
}

function scanTrips(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  network: Network,
  aggregator: OdAggregator,
): void {
  const view = new TripView(network);
  const total = Math.max(1, ctx.store.trips.countTrips(spec.country));
  let seen = 0;
  const options = { ...scanMonths(spec), vehicleClasses: spec.vehicleClasses };
  // Trips are filed by UTC month, like the device tallies behind the expansion factor.
  const months = { from: monthKey(options.fromMonth), to: monthKey(options.toMonth) };
  const weightOf = weightByUtcMonth(
    monthlyExpansion(ctx.store.tripStats.devicesByMonth(spec.country, months)),
  );
  for (const cols of ctx.store.trips.scan(spec.country, options)) {
    for (let i = 0; i < cols.count; i++) {
      aggregator.add(view.load(cols, i, GROUPS_OF_CLASS[cols.vehicleClass[i]], weightOf(cols.startT[i])));
    }
    seen += cols.count;
    ctx.onProgress(Math.min(0.99, seen / total));
  }
}

export const ZONE_OD_COLUMNS = [
  "device_type",
  "zone_id",
  "zone_name",
  "zone_is_pass_through",
  "zone_direction",
  "day_type",
  "day_part",
  "origin_zone_traffic",
  "destination_zone_traffic",
];

/**
 * zone_od_all: per zone, day type and day part, the zone's traffic as an origin
 * and as a destination (all vehicles). With different origin and destination
 * sets, a zone's traffic on the side it is not on is "N/A".
 */
function zoneCsv(
  aggregator: OdAggregator,
  labels: {
    groups: string[];
    origins: ZoneDef[];
    destinations: ZoneDef[];
    dayTypes: string[];
    dayParts: string[];
  },
  same: boolean,
  scale: number[] | undefined,
): string {
  // Indexed once: a find per output row is quadratic in the zone count.
  const totals = new Map<string, number>();
  for (const t of aggregator.zoneTotals(scale))
    if (t.group === ALL) totals.set(`${t.side}|${t.zone}|${t.dayType}|${t.dayPart}`, t.traffic);
  const value = (side: "origin" | "destination", zone: number, dt: number, dp: number) =>
    totals.get(`${side}|${zone}|${dt}|${dp}`) ?? 0;
  const rows: (string | number | null)[][] = [];
  const sides: { zones: ZoneDef[]; side: "origin" | "destination" | "both" }[] = same
    ? [{ zones: labels.origins, side: "both" }]
    : [
        { zones: labels.origins, side: "origin" },
        { zones: labels.destinations, side: "destination" },
      ];
  for (let dt = 0; dt < labels.dayTypes.length; dt++) {
    for (const { zones, side } of sides) {
      zones.forEach((z, zone) => {
        for (let dp = 0; dp < labels.dayParts.length; dp++) {
          rows.push([
            labels.groups[ALL],
            z.id,
            z.name,
            z.isPass ? "yes" : "no",
            z.direction === null ? "N/A" : z.direction,
            labels.dayTypes[dt],
            labels.dayParts[dp],
            side === "destination" ? "N/A" : value("origin", zone, dt, dp),
            side === "origin" ? "N/A" : value("destination", zone, dt, dp),
          ]);
        }
      });
    }
  }
  return toCsv(ZONE_OD_COLUMNS, rows);
}

const RATIO_OF_CLASS: Partial<Record<VehicleClass, string>> = {
  personal: "personal_traffic_ratio",
  medium_commercial: "medium_commercial_ratio",
  heavy_commercial: "heavy_commercial_ratio",
};

/**
 * Pass-through zones with a vehicle calibration, each once (a set listed on
 * both sides counts on the origin side). A group's share of a zone's volume
 * is the sum of the zone's ratios of the group's vehicle classes the travel
 * mode covers (All Vehicles: all three, i.e. 1).
 */
function calibrationZones(spec: AnalysisSpec, origins: ZoneSide, destinations: ZoneSide | null) {
  const zones: CalibrationZone[] = [];
  const taken = new Set<string>();
  const sides = [
    ["origin", origins] as const,
    ...(destinations ? [["destination", destinations] as const] : []),
  ];
  for (const [side, zoneSide] of sides)
    zoneSide.features.forEach((f, zone) => {
      const p = f.properties;
      const key = zoneSide.keys[zone];
      if (
        p.is_pass !== 1 ||
        typeof p.calibration_type !== "string" ||
        typeof p.calibration_value !== "number"
      )
        return;
      if (taken.has(key)) return;
      taken.add(key);
      const ratio = (c: VehicleClass) => Number(p[RATIO_OF_CLASS[c] ?? ""] ?? 0);
      zones.push({
        side,
        zone,
        name: String(p.name),
        volume: p.calibration_value,
        days: /^(AWDT|AADWT)$/.test(p.calibration_type) ? "weekdays" : "all",
        groupShares: GROUPS.map((g) =>
          g.classes.filter((c) => spec.vehicleClasses.includes(c)).reduce((sum, c) => sum + ratio(c), 0),
        ),
      });
    });
  return zones;
}

/** Scale factors of volume output, or an actionable error when the calibration saw no trip. */
function volumeFactors(spec: AnalysisSpec, calibration: CalibrationCounter): number[] {
  const days = spec.dateRanges.flatMap((r) => [...daysBetween(r.startDay, r.endDay)]);
  const factors = calibration.factors({
    all: days.length,
    weekdays: days.filter((d) => d.weekday <= 5).length,
  });
  if (factors) return factors;
  const names = calibration.zones.map((z) => `"${z.name}"`).join(", ");
  throw new Error(
    names === ""
      ? "volume output needs a pass-through zone with calibration_type and calibration_value; none is left in the zone sets"
      : `volume output: no trip of the analysis passed the calibration zones (${names}) on the days their ` +
          "calibration type counts; calibrate zones on roads the sample covers, or use output_type index",
  );
}
