import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { parsePercentiles } from "../../domain/analyses/grammar.js";
import { DEFAULT_SPEED_PERCENTILES } from "../../domain/analyses/spec.js";
import { vendorOptionsOf } from "../../domain/analyses/vendor-options.js";
import { monthlyExpansion } from "../../engine/expansion.js";
import { networkTimeZone } from "../networks.js";
import { toCsv, type CsvValue } from "../../engine/analysis/csv.js";
import { DaySlicer } from "../../engine/analysis/day-slicer.js";
import type { OdTrip } from "../../engine/analysis/od-aggregate.js";
import {
  distributionCsv,
  distributionMetrics,
  OdDistributions,
} from "../../engine/analysis/od-distributions.js";
import {
  SegmentTally,
  type SegmentLookup,
  type SegmentPassage,
  type SegmentRow,
} from "../../engine/analysis/segment-analysis.js";
import type { Network } from "../../engine/network/network.js";
import type { Segment } from "../../engine/network/types.js";
import { LocalClock, monthKey } from "../../engine/time.js";
import { TRACE_SOURCES } from "../../engine/trips/types.js";
import { headingMatches } from "../../engine/zones/assign.js";
import { compileZoneSet, zoneDefOf, type ZoneDef } from "../../engine/zones/compile.js";
import { bearingOf } from "../../engine/zones/geometry.js";
import type { ZoneFeature } from "../../domain/records.js";
import { attributeMetricName, metricGroups } from "./catalogue-groups.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import {
  ALL,
  distributionOptions,
  featuresOf,
  GROUPS_OF_CLASS,
  groupNames,
  METRES_PER_UNIT,
  modeOf,
  range,
  scanMonths,
  weightByUtcMonth,
} from "./od-metrics.js";

/** One row subject of a segment analysis: a line zone, or one network segment of a polygon zone. */
export interface AnalysedSegment {
  zone: ZoneDef;
  /** The zone's id for a line zone; the network segment's id for a polygon's segment. */
  segmentId: number | null;
  osmId: number | null;
  name: string;
  roadClass: string;
  /** Network segment indexes. */
  parts: number[];
}

/** segment_types name road classes: `Motorway` is OSM `highway=motorway`, and so on. */
const classesOf = (spec: AnalysisSpec) => vendorOptionsOf(spec).segmentTypes.map((t) => t.toLowerCase());

/**
 * The segments of the zones: a line zone made from an OSM way (`osm_id`) is the way's network segments;
 * a drawn line zone, the network segments its gate crosses; a polygon zone gives one row per network
 * segment of the `segment_types` classes that runs inside it.
 */
export function analysedSegments(
  features: ZoneFeature[],
  network: Network,
  classes: string[],
): AnalysedSegment[] {
  const out: AnalysedSegment[] = [];
  const indexOf = (s: Segment) => network.indexOfSegment(s.id)!;
  for (const f of features) {
    const zone = zoneDefOf(f);
    if (zone.kind === "line") {
      const osmId = typeof f.properties.osm_id === "number" ? f.properties.osm_id : null;
      const parts =
        osmId !== null
          ? network.segmentsOfWay(osmId).map(indexOf)
          : [...compileZoneSet([f], network).passBySegment.keys()].sort((a, b) => a - b);
      const first = parts.length ? network.segments[parts[0]] : null;
      out.push({
        zone,
        segmentId: zone.id,
        osmId: osmId ?? first?.wayId ?? null,
        name: zone.name,
        roadClass: first?.roadClass ?? "N/A",
        parts,
      });
      continue;
    }
    // Every segment touching the polygon, found as pass-through hits whatever the zone's is_pass.
    const inside = compileZoneSet([{ ...f, properties: { ...f.properties, is_pass: 1 } }], network);
    for (const index of [...inside.passBySegment.keys()].sort((a, b) => a - b)) {
      const s = network.segments[index];
      if (!classes.includes(s.roadClass)) continue;
      out.push({
        zone,
        segmentId: s.id,
        osmId: s.wayId,
        name: s.name ?? `way ${s.wayId}`,
        roadClass: s.roadClass,
        parts: [index],
      });
    }
  }
  return out;
}

/** Network index → the analysed segments travel along / against it counts for (zone direction applied). */
export function lookupOf(segments: AnalysedSegment[], network: Network): SegmentLookup {
  const lookup: SegmentLookup = new Map();
  segments.forEach((seg, i) => {
    for (const index of seg.parts) {
      const coords = network.segments[index].coords;
      const [a, b] = [coords[0], coords[coords.length - 1]];
      const along = bearingOf((b[0] - a[0]) * network.ruler.kx, (b[1] - a[1]) * network.ruler.ky);
      const entry = lookup.get(index) ?? [[], []];
      if (headingMatches(seg.zone, (along + 180) % 360)) entry[0].push(i);
      if (headingMatches(seg.zone, along)) entry[1].push(i);
      lookup.set(index, entry);
    }
  });
  return lookup;
}

/**
 * The tally that finds a trip's passages over the analysed segments, sized for the analysis' day types
 * and parts (the network types use only its passages).
 */
export function passageFinder(
  spec: AnalysisSpec,
  network: Network,
  segments: AnalysedSegment[],
): SegmentTally {
  return new SegmentTally(lookupOf(segments, network), network, {
    segments: segments.length,
    dayTypes: spec.dayTypes.length,
    dayParts: spec.dayParts.length,
  });
}

export const SA_IDENTITY_COLUMNS = [
  "device_type",
  "zone_id",
  "zone_name",
  "segment_id",
  "osm_id",
  "segment_name",
  "road_class",
  "zone_direction",
  "day_type",
  "day_part",
];

/** The values of the identity columns up to `day_type` (the time slice's column follows). */
export function segmentIdentity(s: AnalysedSegment, groupName: string, dayType: string): CsvValue[] {
  const direction = s.zone.direction === null ? "N/A" : s.zone.direction;
  return [groupName, s.zone.id, s.zone.name, s.segmentId, s.osmId, s.name, s.roadClass, direction, dayType];
}

export const speedUnit = (spec: AnalysisSpec) => (spec.unit === "km" ? "kph" : "mph");
/** m/s → mph or km/h, one decimal. */
export const speedIn = (spec: AnalysisSpec, ms: number) =>
  Math.round(((ms * 3600) / METRES_PER_UNIT[spec.unit]) * 10) / 10;

/** The percentiles every segment row carries: those asked for, else the default list. */
export const percentilesOf = (spec: AnalysisSpec) =>
  spec.speedPercentiles ?? parsePercentiles(DEFAULT_SPEED_PERCENTILES, "speed_percentile_bins", []);

export function saColumns(spec: AnalysisSpec): string[] {
  const unit = speedUnit(spec);
  return [
    ...SA_IDENTITY_COLUMNS,
    "average_daily_segment_traffic",
    `avg_segment_speed_${unit}`,
    ...percentilesOf(spec).map((p) => `segment_speed_${unit}_p${p}`),
    "avg_trip_duration",
    "avg_trip_length",
  ];
}

/**
 * Segment_Analysis: `sa_<suffix>` (and `_pers` / `_comm` as od_* has them) per analysed segment, day type
 * and day part, sliced by when the trip entered the segment; with trip / traveler attributes,
 * `sa_trip_duration`, `sa_trip_length`, … of the trips on each segment.
 */
export async function computeSegmentMetrics(spec: AnalysisSpec, ctx: ComputeContext): Promise<MetricCsvs> {
  const network = await ctx.networks.get(spec.country);
  if (!network) throw new Error(`no road network is imported for country "${spec.country}"`);
  const segments = analysedSegments(await featuresOf(ctx, spec, spec.originSets), network, classesOf(spec));
  if (segments.every((s) => s.parts.length === 0))
    throw new Error(
      `the zones hold no road segment of the network (segment_types: ${vendorOptionsOf(spec).segmentTypes.join(", ")}); ` +
        "draw line zones on roads, or polygons over roads of those classes",
    );
  const percentiles = percentilesOf(spec);
  const { tally, slicer, distributions, options } = await scanSegments(spec, ctx, network, segments);
  const rows = tally.rows(percentiles);
  const names = groupNames(spec);
  const perDay = (weight: number, dayType: number) => {
    if (spec.outputType === "trip_counts") return Math.round(weight);
    const days = slicer.daysPerType[dayType];
    return days > 0 ? Math.round(weight / days) : 0;
  };
  const identity = (r: Pick<SegmentRow, "group" | "segment" | "dayType" | "dayPart">): CsvValue[] => [
    ...segmentIdentity(segments[r.segment], names[r.group], spec.dayTypes[r.dayType].label),
    spec.dayParts[r.dayPart].label,
  ];
  const metrics: MetricCsvs = {};
  for (const [name, groups] of metricGroups(spec, "sa"))
    metrics[name] = toCsv(
      saColumns(spec),
      rows
        .filter((r) => groups.includes(r.group))
        .map((r) => [
          ...identity(r),
          perDay(r.weight, r.dayType),
          r.avgSpeedMs === null ? "N/A" : speedIn(spec, r.avgSpeedMs),
          ...(r.percentilesMs ?? percentiles.map(() => null)).map((v) =>
            v === null ? "N/A" : speedIn(spec, v),
          ),
          Math.round(r.avgTripDurationS / 60),
          Math.round((r.avgTripLengthM / METRES_PER_UNIT[spec.unit]) * 100) / 100,
        ]),
    );
  if (distributions) {
    const { trip, traveler } = distributionMetrics(options, spec.unit);
    const wanted = { ...(spec.tripAttributes ? trip : {}), ...(spec.travelerAttributes ? traveler : {}) };
    const slices = rows
      .filter((r) => r.group === ALL)
      .map((r) => ({
        identity: identity(r),
        stats: distributions.statsAt(r.dayType, r.dayPart, r.segment, 0)!,
      }));
    for (const [name, metric] of Object.entries(wanted))
      if (name !== "od_speed_percentile")
        metrics[attributeMetricName(name, "sa")] = distributionCsv(SA_IDENTITY_COLUMNS, slices, metric);
  }
  return metrics;
}

/** One pass over the analysis' trips, counting each trip on every analysed segment it travels. */
export async function scanSegments(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  network: Network,
  segments: AnalysedSegment[],
) {
  const tally = passageFinder(spec, network, segments);
  const options = { ...distributionOptions(spec, network), percentiles: null };
  const distributions = spec.tripAttributes || spec.travelerAttributes ? new OdDistributions(options) : null;
  const slicer = await daySlicerOf(spec, ctx);
  await scanPassages(spec, ctx, network, tally, (passages, trip, cols, i) => {
    for (const p of passages) {
      const slice = slicer.at(p.enterT);
      if (!slice) continue;
      tally.add(p, trip, slice);
      distributions?.add({
        trip: attributeTrip(cols, i, trip.weight),
        origins: [],
        destinations: [],
        pairs: [[p.segment, 0]],
        weekday: 0,
        ...slice,
      });
    }
  });
  return { tally, slicer, distributions, options };
}

/** What a passage visitor knows of the trip besides its passages. */
export interface ScannedTrip {
  weight: number;
  groups: readonly number[];
  durationS: number;
  lengthM: number;
}

/** Day types and parts of the analysis, sliced by a moment in the network's local time. */
export async function daySlicerOf(spec: AnalysisSpec, ctx: ComputeContext): Promise<DaySlicer> {
  return new DaySlicer(
    {
      dayTypes: spec.dayTypes.map((d) => ({ weekdays: range(d.start, d.end) })),
      dayParts: spec.dayParts.map((p) => ({ startHour: p.start, endHour: p.end })),
      dateSpans: spec.dateRanges.map((r) => ({ from: r.startDay, to: r.endDay })),
    },
    LocalClock.of(await networkTimeZone(ctx.store, spec.country)),
  );
}

/**
 * One pass over the analysis' trips (its months, mode and sources, expanded by month), handing each
 * trip that travels an analysed segment to `visit` with its passages.
 */
export async function scanPassages(
  spec: AnalysisSpec,
  ctx: ComputeContext,
  network: Network,
  tally: SegmentTally,
  visit: (
    passages: SegmentPassage[],
    trip: ScannedTrip,
    cols: Parameters<SegmentTally["passages"]>[0],
    i: number,
  ) => void,
): Promise<void> {
  const { sources } = modeOf(spec);
  const scan = {
    ...scanMonths(spec),
    vehicleClasses: spec.vehicleClasses,
    sources: sources.length < TRACE_SOURCES.length ? sources : undefined,
  };
  const weightOf = weightByUtcMonth(
    monthlyExpansion(
      await ctx.store.tripStats.devicesByMonth(spec.country, {
        from: monthKey(scan.fromMonth),
        to: monthKey(scan.toMonth),
      }),
    ),
  );
  const indexOf = (id: number) => network.indexOfSegment(id);
  const total = Math.max(1, await ctx.store.trips.countTrips(spec.country));
  let done = 0;
  for await (const cols of ctx.store.trips.scan(spec.country, scan)) {
    for (let i = 0; i < cols.count; i++) {
      const passages = tally.passages(cols, i, indexOf);
      if (passages.length === 0) continue;
      visit(
        passages,
        {
          weight: weightOf(cols.startT[i]),
          groups: GROUPS_OF_CLASS[cols.vehicleClass[i]],
          durationS: (cols.endT[i] - cols.startT[i]) / 1000,
          lengthM: cols.lengthM[i],
        },
        cols,
        i,
      );
    }
    done += cols.count;
    ctx.onProgress(Math.min(0.99, done / total));
  }
}

/** What the attribute distributions read of a trip (no path: they use its ends, times and length). */
function attributeTrip(cols: Parameters<SegmentTally["passages"]>[0], i: number, weight: number): OdTrip {
  return {
    origin: [cols.originLon[i], cols.originLat[i]],
    destination: [cols.destLon[i], cols.destLat[i]],
    segments: [],
    forward: [],
    startT: cols.startT[i],
    endT: cols.endT[i],
    groups: [],
    weight,
    lengthM: cols.lengthM[i],
    purpose: cols.purpose[i],
    incomeBand: cols.incomeBand[i],
  };
}
