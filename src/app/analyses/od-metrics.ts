import type { AnalysisSpec, ZoneSetRef } from "../../domain/analyses/spec.js";
import { monthlyExpansion, onWeightGrid } from "../../engine/expansion.js";
import { networkTimeZone } from "../networks.js";
import {
  OdAggregator,
  type ObservedTrip,
  type OdAggregatorState,
  type OdRow,
  type OdTrip,
} from "../../engine/analysis/od-aggregate.js";
import {
  OD_IDENTITY_COLUMNS,
  odCsvHeader,
  OdCsvWriter,
  odIdentity,
  type OdLabels,
} from "../../engine/analysis/od-csv.js";
import type { CellRecords } from "../../engine/analysis/cell-table.js";
import {
  distributionCsv,
  distributionMetrics,
  OdDistributions,
  type DistributionOptions,
} from "../../engine/analysis/od-distributions.js";
import { toCsv } from "../../engine/analysis/csv.js";
import { CalibrationCounter, type CalibrationZone } from "../../engine/analysis/od-calibration.js";
import { TripView } from "../../engine/analysis/trip-view.js";
import type { Network } from "../../engine/network/network.js";
import { daysBetween, LocalClock, monthKey } from "../../engine/time.js";
import { compileZoneSet, type CompiledZoneSet, type ZoneDef } from "../../engine/zones/compile.js";
import { VEHICLE_CLASS_OF_CODE } from "../../engine/trips/codes.js";
import { TRACE_SOURCES, type VehicleClass } from "../../engine/trips/types.js";
import { findTravelMode, type TravelMode } from "../../domain/travel-modes.js";
import type { ResultPiece, Store, TripScanOptions } from "../ports/store.js";
import type { StoredZoneSet, ZoneFeature } from "../../domain/records.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { ZoneTally } from "../../engine/analysis/zone-tally.js";
import { vendorOptionsOf } from "../../domain/analyses/vendor-options.js";
import { coverageReview, REVIEW_RESULT, samplePeriods, type ZoneSample } from "./od-review.js";

/** Device-type groups of the OD metrics; a trip counts in every group its vehicle class belongs to. */
const GROUPS = [
  {
    name: "All Vehicles",
    classes: ["personal", "medium_commercial", "heavy_commercial", "bicycle", "pedestrian", "bus", "rail"],
  },
  { name: "Personal", classes: ["personal"] },
  { name: "Commercial", classes: ["medium_commercial", "heavy_commercial"] },
  { name: "Medium Commercial", classes: ["medium_commercial"] },
  { name: "Heavy Commercial", classes: ["heavy_commercial"] },
] as const;
export const ALL = 0;
export const PERSONAL = 1;
export const COMMERCIAL = 2;
const MEDIUM = 3;
const HEAVY = 4;

/** Which groups each vehicle class (by its code in the trip store) counts in. */
export const GROUPS_OF_CLASS: number[][] = Array.from(VEHICLE_CLASS_OF_CODE, (c) =>
  GROUPS.flatMap((g, i) => ((g.classes as readonly string[]).includes(c) ? [i] : [])),
);

/** Device type of the mode's own traffic for modes of one kind of traveller (the vehicle modes: All Vehicles). */
const SINGLE_KIND_NAMES: Partial<Record<string, string>> = {
  Truck: "Truck",
  Bicycle: "Bicycle",
  Pedestrian: "Pedestrian",
  Bus: "Bus",
  Rail: "Rail",
};

/** The device-type name of each group's rows, as the CSVs write it. */
export function groupNames(spec: AnalysisSpec): string[] {
  return [allGroupName(spec), ...GROUPS.slice(1).map((g) => g.name)];
}

/** How the all-traffic metric names its device type. */
function allGroupName(spec: AnalysisSpec): string {
  return SINGLE_KIND_NAMES[spec.travelMode] ?? GROUPS[ALL].name;
}

/** The analysis' travel mode; specs store its canonical name, so it is always found. */
export function modeOf(spec: AnalysisSpec): TravelMode {
  const mode = findTravelMode(spec.travelMode);
  if (!mode) throw new Error(`unknown travel mode "${spec.travelMode}"`);
  return mode;
}

interface ZoneSide {
  features: ZoneFeature[];
  /** Per feature: `<set uuid>#<index in the set>`, the same zone whichever side lists it. */
  keys: string[];
  compiled: CompiledZoneSet;
}

/** The zone sets an analysis references, in order; a set deleted since creation fails the analysis. */
export async function referencedSets(
  store: Store,
  spec: AnalysisSpec,
  refs: ZoneSetRef[],
): Promise<StoredZoneSet[]> {
  const sets: StoredZoneSet[] = [];
  for (const ref of refs) {
    const set = await store.zoneSets.get(spec.orgId, ref.uuid);
    if (!set)
      throw new Error(`zone set "${ref.name}" was deleted after the analysis was created; create it again`);
    sets.push(set);
  }
  return sets;
}

/** The zones of the referenced sets, in order. */
export async function featuresOf(
  ctx: ComputeContext,
  spec: AnalysisSpec,
  refs: ZoneSetRef[],
): Promise<ZoneFeature[]> {
  return (await referencedSets(ctx.store, spec, refs)).flatMap((set) => set.featureCollection.features);
}

async function loadSide(
  store: Store,
  spec: AnalysisSpec,
  refs: AnalysisSpec["originSets"],
  network: Network,
): Promise<ZoneSide> {
  const sets = await referencedSets(store, spec, refs);
  const features = sets.flatMap((set) => set.featureCollection.features);
  const keys = sets.flatMap((set) => set.featureCollection.features.map((_, i) => `${set.uuid}#${i}`));
  return { features, keys, compiled: compileZoneSet(features, network) };
}

/**
 * OD_Preset_Geography's destinations: the areas of the preset geography as end zones. An area's
 * zone id is its numeric area id (the postal code, or the OSM relation id), its name the area's.
 */
async function presetSide(
  store: Store,
  country: string,
  geographyType: string,
  network: Network,
): Promise<ZoneSide> {
  const areas = await store.presetAreas.list(country, geographyType);
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

/** The origin and destination zones of an OD analysis, compiled on the network. */
async function loadSides(
  store: Store,
  spec: AnalysisSpec,
  network: Network,
): Promise<{ origins: ZoneSide; destinations: ZoneSide; same: boolean }> {
  const origins = await loadSide(store, spec, spec.originSets, network);
  const preset = spec.options?.geographyType;
  const same = preset === undefined && sameSets(spec.originSets, spec.destinationSets);
  const destinations = same
    ? origins
    : preset !== undefined
      ? await presetSide(store, spec.country, preset, network)
      : await loadSide(store, spec, spec.destinationSets, network);
  return { origins, destinations, same };
}

const sameSets = (a: AnalysisSpec["originSets"], b: AnalysisSpec["originSets"]) =>
  a.length === b.length && a.every((r, i) => r.uuid === b[i].uuid);

/** Months to scan: one either side of the ranges, as trips are filed by UTC month but sliced by local day. */
export function scanMonths(spec: AnalysisSpec) {
  const days = spec.dateRanges.flatMap((r) => [r.startDay, r.endDay]).sort();
  const shift = (day: string, months: number) => {
    const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
    d.setUTCMonth(d.getUTCMonth() + months);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1 };
  };
  return { fromMonth: shift(days[0], -1), toMonth: shift(days[days.length - 1], 1) };
}

/**
 * The months whose device counts give a scan's expansion factors: the scanned months, as trips are
 * filed by UTC month like the device tallies behind the factor.
 */
export function expansionMonths(spec: AnalysisSpec): { from: string; to: string } {
  const { fromMonth, toMonth } = scanMonths(spec);
  return { from: monthKey(fromMonth), to: monthKey(toMonth) };
}

/** An OD_Analysis' trips summed per cell, before the cells become CSV rows. */
export interface OdAggregation {
  aggregator: OdAggregator;
  origins: ZoneSide;
  destinations: ZoneSide;
  /** Origin and destination sets are the same sets (intrazonal pairs, one zone_od_all side). */
  same: boolean;
  /**
   * Cells with trips; `sample` is the raw number of stored trips behind each, before averaging per day.
   * Built when first read (the CSVs stream them from the aggregator instead).
   */
  readonly rows: OdRow[];
  /** Per device group: the calibration scale of volume output; undefined for index output. */
  scale: number[] | undefined;
  distributions: OdDistributions;
  options: DistributionOptions;
  /** Trips per zone (each once), for zone_counts and the coverage review. */
  zones: ZoneTally;
  /** enable_15min: od_all's cells per 15-minute day part. */
  quarterHours: OdAggregator | null;
}

/** An OD_Analysis' aggregators, set up and not yet fed (see prepareOd). */
interface OdScan {
  network: Network;
  origins: ZoneSide;
  destinations: ZoneSide;
  same: boolean;
  aggregator: OdAggregator;
  quarterHours: OdAggregator | null;
  distributions: OdDistributions;
  options: DistributionOptions;
  calibration: CalibrationCounter | null;
  zones: ZoneTally;
  /** What scanTrips feeds: the aggregator, and the 15-minute one beside it. */
  sink: { add(trip: OdTrip): void };
  /** Only steps on segments of pass-through zones matter to zone assignment. */
  passSegments: Set<number>;
}

/**
 * Scans the stored trips of an OD_Analysis into its cells. computeOdMetrics
 * formats the result; ground-truth tests and diagnostics read the raw sample
 * counts per pair from `rows`, which the CSVs only show averaged and rounded.
 */
export async function aggregateOd(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  /** Also sees every analysed trip that meets a zone (other analysis types built on this scan). */
  watch?: (seen: ObservedTrip) => void,
  /** Sees every scanned trip of the travel mode, whether or not it meets a zone or the analysed days. */
  everyTrip?: (trip: OdTrip) => void,
  /** Hand `watch` every trip's whole matched path (top routes), not only the steps zone assignment needs. */
  wholePaths = false,
): Promise<OdAggregation> {
  const scan = await prepareOd(spec, ctx, watch, everyTrip);
  await scanTrips(spec, ctx, scan.network, wholePaths ? undefined : scan.passSegments, scan.sink);
  return finishOd(spec, scan);
}

/** Loads the network and zones of an OD_Analysis and sets up its aggregators, empty. */
async function prepareOd(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  watch?: (seen: ObservedTrip) => void,
  everyTrip?: (trip: OdTrip) => void,
): Promise<OdScan> {
  const network = await ctx.networks.get(spec.country);
  if (!network) throw new Error(`no road network is imported for country "${spec.country}"`);
  const load = () => loadSides(ctx.store, spec, network);
  // A warm thread compiles an analysis' zones once for all its shards and its merge.
  const { origins, destinations, same } = ctx.memo
    ? await ctx.memo.get(spec.uuid, "od-zone-sides", network, load)
    : await load();
  const aggregator = new OdAggregator(
    origins.compiled,
    destinations.compiled,
    same,
    {
      dayTypes: spec.dayTypes.map((d) => ({ weekdays: range(d.start, d.end) })),
      dayParts: spec.dayParts.map((p) => ({ startHour: p.start, endHour: p.end })),
      dateSpans: spec.dateRanges.map((r) => ({ from: r.startDay, to: r.endDay })),
    },
    LocalClock.of(await networkTimeZone(ctx.store, spec.country)),
  );
  // trip_counts: totals over the analysed days, not daily averages.
  aggregator.averagePerDay = spec.outputType !== "trip_counts";
  const quarterHours = vendorOptionsOf(spec).fifteenMinute
    ? new OdAggregator(
        origins.compiled,
        destinations.compiled,
        same,
        {
          dayTypes: spec.dayTypes.map((d) => ({ weekdays: range(d.start, d.end) })),
          dayParts: QUARTER_HOURS.map((_, q) => ({ startHour: q, endHour: q })),
          dateSpans: spec.dateRanges.map((r) => ({ from: r.startDay, to: r.endDay })),
          slotMinutes: 15,
        },
        LocalClock.of(await networkTimeZone(ctx.store, spec.country)),
      )
    : null;
  if (quarterHours) quarterHours.averagePerDay = aggregator.averagePerDay;
  const options = distributionOptions(spec, network);
  const distributions = new OdDistributions(options);
  const attributes = spec.tripAttributes || spec.travelerAttributes;
  const calibration =
    spec.outputType === "volume"
      ? new CalibrationCounter(calibrationZones(spec, origins, same ? null : destinations), GROUPS.length)
      : null;
  const zones = new ZoneTally(
    origins.compiled.zones.length,
    destinations.compiled.zones.length,
    same,
    spec.dayParts.length,
    ALL,
  );
  aggregator.sinks.push(zones);
  // Observers get objects per trip: set only when one is needed.
  if (attributes || calibration || watch)
    aggregator.observer = (seen) => {
      if (attributes) distributions.add(seen);
      calibration?.add(seen);
      watch?.(seen);
    };
  const sink =
    quarterHours || everyTrip
      ? {
          add(trip: OdTrip) {
            everyTrip?.(trip);
            aggregator.add(trip);
            quarterHours?.add(trip);
          },
        }
      : aggregator;
  // Only steps on segments of pass-through zones matter to zone assignment.
  const passSegments = new Set([
    ...origins.compiled.passBySegment.keys(),
    ...destinations.compiled.passBySegment.keys(),
  ]);
  return {
    network,
    origins,
    destinations,
    same,
    aggregator,
    quarterHours,
    distributions,
    options,
    calibration,
    zones,
    sink,
    passSegments,
  };
}

/** The aggregation of fed aggregators: the volume scale is known only once every trip is in. */
function finishOd(spec: AnalysisSpec, scan: OdScan): OdAggregation {
  const { aggregator, calibration } = scan;
  const scale = calibration ? volumeFactors(spec, calibration) : undefined;
  let rows: OdRow[] | undefined;
  return {
    aggregator,
    origins: scan.origins,
    destinations: scan.destinations,
    same: scan.same,
    get rows() {
      return (rows ??= aggregator.rows(GROUPS.length, scale));
    },
    scale,
    distributions: scan.distributions,
    options: scan.options,
    zones: scan.zones,
    quarterHours: scan.quarterHours,
  };
}

/**
 * Whether an OD spec can be split into shards: its sums merge exactly. The trip- and traveler-attribute
 * distributions and the aadt output (a second, whole-year scan) are not split yet: they run whole.
 */
export function odShardable(spec: AnalysisSpec): boolean {
  return !spec.tripAttributes && !spec.travelerAttributes && spec.outputType !== "aadt";
}

/** What one shard of an OD_Analysis hands the merge: the sums of its trips. */
export interface OdPartial {
  aggregator: OdAggregatorState;
  quarterHours: OdAggregatorState | null;
  zones: ReturnType<ZoneTally["exportState"]>;
  calibration: Float64Array[] | null;
}

/**
 * A shard's sums cut for a split merge: `common`, everything but the OD cells (zone totals, tallies,
 * calibration counts, 15-minute sums), which every merge step reads; and the OD cells in `cells`, runs
 * of zone pairs in pair order (OdSums.exportCellPieces), of which each merge part reads its own.
 */
export interface OdShardPieces {
  common: OdPartial;
  cells: CellRecords[];
}

/**
 * Sums the trips of one shard (a month's chunk id range) of an OD_Analysis. `devices`: the devices per
 * month counted when the shards were planned (expansionMonths), else counted here.
 */
export async function odShardPartial(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  scope: Pick<TripScanOptions, "fromMonth" | "toMonth" | "chunkIds">,
  devices?: Map<string, number>,
): Promise<OdPartial> {
  return partialOf(await scanShard(spec, ctx, scope, devices), true);
}

/** odShardPartial with the OD cells apart, cut into `cellPieces` runs of zone pairs. */
export async function odShardPieces(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  scope: Pick<TripScanOptions, "fromMonth" | "toMonth" | "chunkIds">,
  devices: Map<string, number> | undefined,
  cellPieces: number,
): Promise<OdShardPieces> {
  const scan = await scanShard(spec, ctx, scope, devices);
  return { common: partialOf(scan, false), cells: scan.aggregator.exportCellPieces(cellPieces) };
}

async function scanShard(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  scope: Pick<TripScanOptions, "fromMonth" | "toMonth" | "chunkIds">,
  devices?: Map<string, number>,
): Promise<OdScan> {
  const scan = await prepareOd(spec, ctx);
  await scanTrips(spec, ctx, scan.network, scan.passSegments, scan.sink, scope, devices);
  return scan;
}

function partialOf(scan: OdScan, withCells: boolean): OdPartial {
  return {
    aggregator: scan.aggregator.exportState(withCells),
    quarterHours: scan.quarterHours?.exportState() ?? null,
    zones: scan.zones.exportState(),
    calibration: scan.calibration?.exportState() ?? null,
  };
}

/**
 * The od_* rows a merge part wrote, per metric: one run of rows per day type × device group (the CSV's
 * outer order, `dayType × GROUPS.length + group`), each over the part's zone pairs. The parts' runs laid
 * side by side in part order give each run whole, in pair order (assembleOdCsvs).
 */
export type OdRowRuns = Record<string, string[]>;

/**
 * The OD metrics of the merged shard partials: the same CSVs as computeOdMetrics over all trips. With
 * `odParts` (the merge parts' rows, see odMergePart), the od_* metrics are assembled from them and only
 * the zone totals, tallies and calibration counts of the partials are added here, not their cells.
 */
export async function mergeOdPartials(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  partials: readonly OdPartial[],
  odParts?: readonly OdRowRuns[],
): Promise<MetricCsvs> {
  const scan = await prepareOd(spec, ctx);
  for (const p of partials) {
    scan.aggregator.absorb(p.aggregator, odParts ? [] : undefined);
    if (p.quarterHours) scan.quarterHours?.absorb(p.quarterHours);
    scan.zones.absorb(p.zones);
    if (p.calibration) scan.calibration?.absorb(p.calibration);
  }
  const given = odParts && assembleOdCsvs(odMetricGroups(spec), odParts);
  return await odMetricsOf(spec, ctx, finishOd(spec, scan), given);
}

/**
 * The od_* metrics (od_all, od_pers, od_comm, ...) with the device groups each holds, in the order the
 * metrics are written. They hold most of an analysis' rows.
 */
function odMetricGroups(spec: AnalysisSpec): [string, number[]][] {
  const mode = modeOf(spec);
  const has = (c: VehicleClass) => spec.vehicleClasses.includes(c);
  // Truck and By_Weight modes split commercial traffic into medium and heavy vehicles.
  const commercial = mode.byWeight ? [COMMERCIAL, MEDIUM, HEAVY] : [COMMERCIAL];
  // Metric name → the groups whose rows it holds; the groups are disjoint, so one pass writes them all.
  const wanted: [string, number[]][] = [];
  if (mode.suffix === "comm") wanted.push(["od_comm", commercial]);
  else {
    wanted.push([`od_${mode.suffix}`, [ALL]]);
    if (has("personal") && spec.vehicleClasses.length > 1) wanted.push(["od_pers", [PERSONAL]]);
    if (has("medium_commercial") || has("heavy_commercial")) wanted.push(["od_comm", commercial]);
  }
  return wanted;
}

/**
 * Merge part `part` of the shards' sums: every od_* metric's rows over the zone pairs of the cells it
 * was handed (its runs of pairs, see OdShardPieces), with every partial's zone totals and calibration
 * counts, which the rows' columns and volume scale read. Parts run side by side on several workers;
 * mergeOdPartials then assembles their rows.
 */
export async function odMergePart(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  partials: readonly OdPartial[],
): Promise<OdRowBytes> {
  const scan = await prepareOd(spec, ctx);
  for (const p of partials) {
    scan.aggregator.absorb(p.aggregator);
    if (p.calibration) scan.calibration?.absorb(p.calibration);
  }
  const od = finishOd(spec, scan);
  return odRowRuns(od.aggregator, od.scale, odLabels(spec, od), odMetricGroups(spec), spec.dayTypes.length);
}

/**
 * OdRowRuns as UTF-8 bytes, each run in blocks (an empty run: none): what a merge part stores, as bytes,
 * without making text of ~90 MB of rows that only the database reads.
 */
export type OdRowBytes = Record<string, Uint8Array[][]>;

/** The od_* rows of an aggregator per metric, cut into runs at each day type × group (OdRowBytes). */
function odRowRuns(
  aggregator: OdAggregator,
  scale: number[] | undefined,
  labels: OdLabels,
  wanted: [string, number[]][],
  dayTypes: number,
): OdRowBytes {
  const runs: OdRowBytes = {};
  const writerOfGroup: { name: string; writer: OdCsvWriter }[] = [];
  for (const [name, groups] of wanted) {
    runs[name] = Array.from({ length: dayTypes * GROUPS.length }, () => []);
    const writer = new OdCsvWriter(labels, true);
    for (const g of groups) writerOfGroup[g] = { name, writer };
  }
  let run = -1;
  const close = () => {
    const open = writerOfGroup[run % GROUPS.length];
    if (run >= 0 && open) runs[open.name][run] = open.writer.takeRowBytes();
  };
  aggregator.forEachRow(GROUPS.length, scale, (row) => {
    const of = writerOfGroup[row.group];
    if (!of) return;
    const at = row.dayType * GROUPS.length + row.group;
    if (at !== run) {
      close();
      run = at;
    }
    of.writer.add(row);
  });
  close();
  return runs;
}

/**
 * Merge part `part` of `parts`'s rows as result pieces to store (AnalysisRepo.putResultPieces): run r's
 * piece of part p is number r × parts + p, so that the pieces of every part read back in number order
 * are the runs laid together as assembleOdCsvs lays them; empty ones are left out.
 */
export function odRowPieces(runs: OdRowRuns, part: number, parts: number): ResultPiece[] {
  return Object.entries(runs).flatMap(([metric, rows]) =>
    rows.flatMap((csv, run) => (csv === "" ? [] : [{ metric, piece: odRowPiece(run, part, parts), csv }])),
  );
}

/** The result piece number of run `run` of merge part `part` of `parts` (odRowPieces). */
export function odRowPiece(run: number, part: number, parts: number): number {
  return run * parts + part;
}

/**
 * The od_* CSVs from the merge parts' runs of rows: each run's pieces in part order (pair order). No
 * parts: the header alone, the rows being stored as pieces (odRowPieces).
 */
function assembleOdCsvs(wanted: [string, number[]][], parts: readonly OdRowRuns[]): MetricCsvs {
  const csvs: MetricCsvs = {};
  for (const [name] of wanted) {
    const pieces = [odCsvHeader()];
    // A part without rows in a run (or a metric) has none there.
    const runs = Math.max(0, ...parts.map((part) => part[name]?.length ?? 0));
    for (let run = 0; run < runs; run++) for (const part of parts) pieces.push(part[name]?.[run] ?? "");
    csvs[name] = pieces.join("");
  }
  return csvs;
}

/**
 * Origin-destination metrics of an OD_Analysis from the stored trips:
 * od_<suffix> and zone_od_<suffix> of the mode's own traffic (od_all, od_bike, od_bus, ...; Truck: od_comm
 * split by weight), od_pers / od_comm where a vehicle mode has those vehicles,
 * and the trip- and traveler-attribute distributions when asked for.
 */
export async function computeOdMetrics(spec: AnalysisSpec, ctx: ComputeContext): Promise<MetricCsvs> {
  return await odMetricsOf(spec, ctx, await aggregateOd(spec, ctx));
}

/** The labels of an aggregation's rows: device groups, zones, day types and parts. */
function odLabels(spec: AnalysisSpec, od: OdAggregation): OdLabels {
  return {
    groups: [allGroupName(spec), ...GROUPS.slice(1).map((g) => g.name)],
    origins: od.origins.compiled.zones,
    destinations: od.destinations.compiled.zones,
    dayTypes: spec.dayTypes.map((d) => d.label),
    dayParts: spec.dayParts.map((p) => p.label),
  };
}

/** The OD metric CSVs of an aggregation; the od_* ones from `given` when merge parts wrote them. */
async function odMetricsOf(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  od: OdAggregation,
  given?: MetricCsvs,
): Promise<MetricCsvs> {
  const { aggregator, same, scale, distributions, options, zones } = od;
  const labels = odLabels(spec, od);
  const mode = modeOf(spec);
  const metrics: MetricCsvs = {};
  const wanted = odMetricGroups(spec);
  if (!given) Object.assign(metrics, odCsvs(aggregator, scale, labels, wanted));
  else for (const [name] of wanted) metrics[name] = given[name];
  metrics[`zone_od_${mode.suffix}`] = zoneCsv(aggregator, labels, same, scale);
  if (spec.tripAttributes || spec.travelerAttributes)
    Object.assign(metrics, distributionCsvs(spec, options, distributions, aggregator, scale, labels));
  // The mode's own traffic per quarter hour: od_all_15min, od_bike_15min, ...
  if (od.quarterHours)
    Object.assign(
      metrics,
      odCsvs(od.quarterHours, scale, { ...labels, dayParts: QUARTER_HOURS }, [
        [`od_${mode.suffix}_15min`, [ALL]],
      ]),
    );
  if (spec.outputType === "zone_counts") metrics.zone_counts = zoneCountsCsv(od, labels);
  if (spec.outputType === "aadt") metrics.aadt = await aadtCsv(spec, ctx, labels);
  const review = coverageReview(zoneSamples(zones, labels, same), await samplePeriods(spec, ctx.store));
  metrics[REVIEW_RESULT] = JSON.stringify(review);
  return metrics;
}

/** The od_* CSVs, written straight from the aggregator's cells in one ordered pass. */
function odCsvs(
  aggregator: OdAggregator,
  scale: number[] | undefined,
  labels: OdLabels,
  wanted: [string, number[]][],
): MetricCsvs {
  const writerOfGroup: (OdCsvWriter | undefined)[] = [];
  const writers = wanted.map(([name, groups]) => {
    const writer = new OdCsvWriter(labels);
    for (const g of groups) writerOfGroup[g] = writer;
    return [name, writer] as const;
  });
  aggregator.forEachRow(GROUPS.length, scale, (row) => writerOfGroup[row.group]?.add(row));
  return Object.fromEntries(writers.map(([name, writer]) => [name, writer.finish()]));
}

/** `0: 12:00am-12:15am` … `95: 11:45pm-12:00am`: the day parts of od_all_15min. */
const QUARTER_HOURS = Array.from({ length: 96 }, (_, q) => {
  const at = (quarter: number) => {
    const h = Math.floor(quarter / 4) % 24;
    const m = String((quarter % 4) * 15).padStart(2, "0");
    return `${h % 12 === 0 ? 12 : h % 12}:${m}${h < 12 ? "am" : "pm"}`;
  };
  return `${q}: ${at(q)}-${at(q + 1)}`;
});

/** The zones in ZoneTally's numbering (origins, then destinations unless both sides are one set). */
function tallyZones(labels: OdLabels, same: boolean) {
  return [
    ...labels.origins.map((z) => ({ z, side: same ? ("both" as const) : ("origin" as const) })),
    ...(same ? [] : labels.destinations.map((z) => ({ z, side: "destination" as const }))),
  ];
}

/** The columns that name a zone's row (its traffic group, the zone, the day type and part). */
export const ZONE_ROW_COLUMNS = [
  "device_type",
  "zone_id",
  "zone_name",
  "zone_is_pass_through",
  "zone_direction",
  "day_type",
  "day_part",
];

export const ZONE_COUNTS_COLUMNS = [...ZONE_ROW_COLUMNS, "zone_traffic"];

/**
 * zone_counts: per zone, day type and day part, the expanded average daily trips that start, end or
 * pass in the zone, each trip once (zone_od_all counts a zone's origin and destination sides apart).
 */
function zoneCountsCsv(od: OdAggregation, labels: OdLabels): string {
  const rows: (string | number)[][] = [];
  const zones = tallyZones(labels, od.same);
  labels.dayTypes.forEach((dayType, dt) =>
    zones.forEach(({ z }, i) =>
      labels.dayParts.forEach((dayPart, dp) =>
        rows.push([
          labels.groups[ALL],
          z.id ?? "",
          z.name,
          z.isPass ? "yes" : "no",
          z.direction === null ? "N/A" : z.direction,
          dayType,
          dayPart,
          od.aggregator.perDay(od.zones.weightOf(i, dt, dp) * (od.scale?.[ALL] ?? 1), dt),
        ]),
      ),
    ),
  );
  return toCsv(ZONE_COUNTS_COLUMNS, rows);
}

export const AADT_COLUMNS = ["zone_id", "zone_name", "zone_direction", "year", "days_with_data", "aadt"];

/**
 * aadt: per pass-through zone, the annual average daily traffic of the year's data
 * (aadt_calibration_year, else the year of the first date range): the expanded trips through the zone
 * on the year's days with data, divided by those days. One pass over the year's trips, all hours.
 */
async function aadtCsv(spec: AnalysisSpec, ctx: ComputeContext, labels: OdLabels): Promise<string> {
  const year = vendorOptionsOf(spec).aadtCalibrationYear ?? Number(spec.dateRanges[0].startDay.slice(0, 4));
  const from = `${year}-01-01`;
  const to = `${year}-12-31`;
  const days = (await ctx.store.tripStats.dailyTotals(spec.country, spec.vehicleClasses, from, to)).filter(
    (d) => d.trips > 0,
  ).length;
  const yearSpec: AnalysisSpec = {
    ...spec,
    outputType: "index",
    tripAttributes: false,
    travelerAttributes: false,
    dateRanges: [{ start_date: `01/01/${year}`, end_date: `12/31/${year}`, startDay: from, endDay: to }],
    dayTypes: [{ name: "All Days", start: 1, end: 7, label: "All Days" }],
    dayParts: [{ name: "All Day", start: 0, end: 23, label: "All Day" }],
    vendor: { ...vendorOptionsOf(spec), fifteenMinute: false },
  };
  const yearly = await aggregateOd(yearSpec, { ...ctx, onProgress: () => {} });
  const rows = tallyZones(labels, yearly.same).flatMap(({ z }, i) =>
    z.isPass
      ? [
          [
            z.id ?? "",
            z.name,
            z.direction === null ? "N/A" : z.direction,
            year,
            days,
            days > 0 ? Math.round(yearly.zones.weightOf(i, 0, 0) / days) : 0,
          ],
        ]
      : [],
  );
  return toCsv(AADT_COLUMNS, rows);
}

/** Each zone's sampled trips, in the numbering of ZoneTally (origins, then destinations). */
function zoneSamples(zones: ZoneTally, labels: OdLabels, same: boolean): ZoneSample[] {
  return tallyZones(labels, same).map(({ z, side }, i) => ({
    side,
    zone_id: z.id,
    zone_name: z.name,
    sample_trips: zones.sampleOf(i),
  }));
}

/** The trip- and traveler-attribute metrics asked for, one row per all-traffic row of od_all. */
function distributionCsvs(
  spec: AnalysisSpec,
  options: DistributionOptions,
  distributions: OdDistributions,
  aggregator: OdAggregator,
  scale: number[] | undefined,
  labels: OdLabels,
): MetricCsvs {
  const { trip, traveler } = distributionMetrics(options, spec.unit);
  const wanted = { ...(spec.tripAttributes ? trip : {}), ...(spec.travelerAttributes ? traveler : {}) };
  const slices: {
    identity: ReturnType<typeof odIdentity>;
    stats: ReturnType<OdDistributions["statsAt"]> & {};
  }[] = [];
  // Groups below 1: the all-traffic rows only.
  aggregator.forEachRow(ALL + 1, scale, (r) =>
    slices.push({
      identity: odIdentity(r, labels),
      stats: distributions.statsAt(r.dayType, r.dayPart, r.origin, r.destination)!,
    }),
  );
  const out: MetricCsvs = {};
  for (const [name, metric] of Object.entries(wanted))
    out[name] = distributionCsv(OD_IDENTITY_COLUMNS, slices, metric);
  return out;
}

export const METRES_PER_UNIT = { miles: 1609.344, km: 1000 };

export function distributionOptions(spec: AnalysisSpec, network: Network): DistributionOptions {
  return {
    bins: spec.bins,
    metresPerUnit: METRES_PER_UNIT[spec.unit],
    percentiles: spec.speedPercentiles,
    distanceM: (a, b) => network.ruler.distance(a, b),
  };
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * The expansion factor of a trip's UTC month. Chunks come in month order, so the
 * last month's bounds are kept and a date is formatted only when the month changes.
 */
export function weightByUtcMonth(factorOf: (month: string) => number): (t: number) => number {
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

async function scanTrips(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  network: Network,
  passSegments: Iterable<number> | undefined,
  aggregator: { add(trip: OdTrip): void },
  /** A shard's months and chunks; the whole scan when absent. */
  scope?: Pick<TripScanOptions, "fromMonth" | "toMonth" | "chunkIds">,
  /** Devices per month (the expansion factors' input); counted here when absent. */
  devices?: Map<string, number>,
): Promise<void> {
  const view = new TripView(network, passSegments);
  const total = Math.max(1, await ctx.store.trips.countTrips(spec.country));
  let seen = 0;
  const { sources } = modeOf(spec);
  const options = {
    ...scanMonths(spec),
    vehicleClasses: spec.vehicleClasses,
    // Modes of one trace source (LBS_Plus, CVD_Plus) leave the other source's trips out.
    sources: sources.length < TRACE_SOURCES.length ? sources : undefined,
  };
  const factorOf = monthlyExpansion(
    devices ?? (await ctx.store.tripStats.devicesByMonth(spec.country, expansionMonths(spec))),
  );
  // On a fixed grid, weights sum exactly: shards merge to the same bits as one pass.
  const weightOf = weightByUtcMonth((month) => onWeightGrid(factorOf(month)));
  // `for await`: the store ports become asynchronous (issue 12); a plain iterable works as well.
  for await (const cols of ctx.store.trips.scan(spec.country, { ...options, ...scope })) {
    for (let i = 0; i < cols.count; i++) {
      aggregator.add(view.load(cols, i, GROUPS_OF_CLASS[cols.vehicleClass[i]], weightOf(cols.startT[i])));
    }
    seen += cols.count;
    ctx.onProgress(Math.min(0.99, seen / total));
  }
}

export const ZONE_OD_COLUMNS = [...ZONE_ROW_COLUMNS, "origin_zone_traffic", "destination_zone_traffic"];

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
  const value = (side: "origin" | "destination", zone: number, dt: number, dp: number) =>
    aggregator.zoneTraffic(side, zone, ALL, dt, dp, scale);
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
