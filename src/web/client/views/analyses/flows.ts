/**
 * Origin-destination flows from an OD metric CSV (od_all, od_pers, od_comm), DOM-free: reading, slicing by
 * device type / day type / day part, top-N, sorting, the day-part profile and the flow-map features.
 */
import { OD_METRICS as SHARED_OD_METRICS, type AnalysisTypeName } from "../../../../shared/vocabulary.js";
import { boxPolygon } from "../../../../shared/geometry.js";
import type { Feature, FeatureCollection } from "geojson";
import { csvRecords } from "./csv.js";
import { flowArc, zoneAnchor, type LngLat } from "./geometry.js";

const SUFFIXES = ["all", "pers", "comm", "bike", "ped", "bus", "rail"];
/** Per-zone or per-segment metrics, drawn as circles sized by their value (origin = destination = the item). */
export const VALUE_METRICS = ["za", "sa", "aadt"].flatMap((p) => SUFFIXES.map((s) => `${p}_${s}`));
/** Network_Performance's per-segment speeds, drawn as the segments coloured by speed. */
export const SPEED_METRICS = SUFFIXES.map((s) => `np_${s}`);
/** The metrics the results map can show, in the order offered: flows (OD, OD with middle filters), then values. */
export const OD_METRICS: readonly string[] = [
  ...SHARED_OD_METRICS,
  ...SUFFIXES.map((s) => `od_mf_${s}`),
  ...VALUE_METRICS,
  ...SPEED_METRICS,
];

export interface OdFlow {
  deviceType: string;
  originId: string;
  originName: string;
  destinationId: string;
  destinationName: string;
  /** Labels as in the rows, e.g. `0: Average Day (M-Su)`, `2: Peak AM (6am-10am)`. */
  dayType: string;
  dayPart: string;
  odTraffic: number;
  originTraffic: number;
  destinationTraffic: number;
  /** Minutes; null when the cell has none. */
  avgTripDuration: number | null;
}

const COLUMNS: Record<string, keyof OdFlow> = {
  device_type: "deviceType",
  origin_zone_id: "originId",
  origin_zone_name: "originName",
  destination_zone_id: "destinationId",
  destination_zone_name: "destinationName",
  day_type: "dayType",
  day_part: "dayPart",
  o_d_traffic: "odTraffic",
  origin_zone_traffic: "originTraffic",
  destination_zone_traffic: "destinationTraffic",
  avg_trip_duration: "avgTripDuration",
};

const numberOrNull = (text: string | undefined) =>
  text === undefined || text.trim() === "" || !Number.isFinite(Number(text)) ? null : Number(text);

/**
 * The name a segment analysis row is drawn under: the zone's for a line zone, `<road> (<segment id>)` for a
 * network segment of a polygon zone (the map names those features the same way).
 */
export const segmentRowName = (r: Record<string, string>) =>
  r.segment_id && r.segment_id !== r.zone_id ? `${r.segment_name} (${r.segment_id})` : r.zone_name;

/** za_*, sa_* and aadt_* rows as flows within one item, so the map draws a circle per zone or segment. */
export function parseValueCsv(text: string): OdFlow[] {
  const { columns, records } = csvRecords(text);
  const valueColumn = ["average_daily_zone_traffic", "average_daily_segment_traffic", "aadt"].find((c) =>
    columns.includes(c),
  );
  if (!valueColumn) throw new Error("not a zone or segment metric: no traffic column");
  return records.map((r) => {
    const name = columns.includes("segment_id") ? segmentRowName(r) : r.zone_name;
    const value = numberOrNull(r[valueColumn]) ?? 0;
    return {
      deviceType: r.device_type ?? "All Vehicles",
      originId: r.segment_id ?? r.zone_id,
      originName: name,
      destinationId: r.segment_id ?? r.zone_id,
      destinationName: name,
      dayType: r.day_type ?? `Year ${r.year}`,
      dayPart: r.day_part ?? "All Day",
      odTraffic: value,
      originTraffic: numberOrNull(r.aadt_personal) ?? value,
      destinationTraffic: numberOrNull(r.aadt_commercial) ?? value,
      avgTripDuration: numberOrNull(r.avg_trip_duration),
    };
  });
}

/** What a Network_Performance metric's rows are read and coloured by: `metric_type=travel_time` has no speeds. */
export type NpMeasure = "speed" | "travel_time";

/**
 * The rows of an np_* metric, the period in the day part's place. With speeds (`metric_type` all or speed):
 * average speed (`odTraffic`), free flow, travel time index and seconds on the segment. Without
 * (`travel_time`): the seconds on the segment (`odTraffic`, and `avgTripDuration`), the travel time index.
 */
export function parseNpCsv(text: string): { flows: OdFlow[]; measure: NpMeasure } {
  const { columns, records } = csvRecords(text);
  const speed = columns.find((c) => /^avg_speed_(kph|mph)$/.test(c));
  if (!speed && !columns.includes("avg_travel_time_sec"))
    throw new Error("not a network performance metric: no avg_speed or avg_travel_time_sec column");
  const unit = speed?.slice("avg_speed_".length);
  const orNaN = (text: string | undefined) => numberOrNull(text) ?? NaN;
  const flows = records.map((r) => {
    const name = segmentRowName(r);
    return {
      deviceType: r.device_type,
      originId: r.segment_id,
      originName: name,
      destinationId: r.segment_id,
      destinationName: name,
      dayType: r.day_type,
      dayPart: r.period,
      odTraffic: numberOrNull(r[speed ?? "avg_travel_time_sec"]) ?? 0,
      originTraffic: orNaN(r[`free_flow_speed_${unit}`]),
      destinationTraffic: orNaN(r.travel_time_index),
      avgTripDuration: numberOrNull(r.avg_travel_time_sec),
    };
  });
  return { flows, measure: speed ? "speed" : "travel_time" };
}

/**
 * The segments of np_* rows drawn as their zones' lines, coloured by `share`: 0 for the best row of the
 * slice, towards 1 the worse, so congested segments stand out dark red (and are drawn on top). By speed,
 * 1 is a standstill; by travel time, the slice's longest time on a segment.
 */
export function speedFeatures(
  flows: OdFlow[],
  zones: Feature[],
  measure: NpMeasure = "speed",
): { collection: FeatureCollection; unplaced: number } {
  const byName = new Map<string, Feature>();
  for (const z of zones) {
    const name = String(z.properties?.name ?? "").toLowerCase();
    if (z.geometry && /LineString/.test(z.geometry.type) && !byName.has(name)) byName.set(name, z);
  }
  const top = Math.max(1e-9, ...flows.map((f) => f.odTraffic));
  const shareOf = (f: OdFlow) => (measure === "speed" ? 1 - f.odTraffic / top : f.odTraffic / top);
  const features: Feature[] = [];
  let unplaced = 0;
  for (const f of [...flows].sort((a, b) => shareOf(a) - shareOf(b))) {
    const zone = byName.get(f.originName.toLowerCase());
    if (!zone) {
      unplaced++;
      continue;
    }
    const properties = {
      kind: "segment",
      key: pairKey(f),
      origin: f.originName,
      destination: f.destinationName,
      traffic: f.odTraffic,
      share: shareOf(f),
    };
    features.push({ type: "Feature", properties, geometry: zone.geometry });
  }
  return { collection: { type: "FeatureCollection", features }, unplaced };
}

/**
 * The rows of an OD metric; throws when a column the flow view needs is missing. od_mf rows (`o_m_d_traffic`)
 * are summed over their middle filters into one flow per origin and destination.
 */
export function parseOdCsv(text: string): OdFlow[] {
  const { columns, records } = csvRecords(text);
  if (columns.includes("o_m_d_traffic")) return sumOverMiddleFilters(records);
  const missing = Object.keys(COLUMNS).filter((c) => !columns.includes(c));
  if (missing.length) throw new Error(`not an origin-destination metric: no column ${missing.join(", ")}`);
  return records.map((r) => flowOf(r, numberOrNull(r.o_d_traffic) ?? 0));
}

/** One OD row as a flow, its pair's traffic given (o_d_traffic, or o_m_d_traffic summed). */
const flowOf = (r: Record<string, string>, odTraffic: number): OdFlow => ({
  deviceType: r.device_type,
  originId: r.origin_zone_id,
  originName: r.origin_zone_name,
  destinationId: r.destination_zone_id,
  destinationName: r.destination_zone_name,
  dayType: r.day_type,
  dayPart: r.day_part,
  odTraffic,
  originTraffic: numberOrNull(r.origin_zone_traffic) ?? 0,
  destinationTraffic: numberOrNull(r.destination_zone_traffic) ?? 0,
  avgTripDuration: numberOrNull(r.avg_trip_duration),
});

function sumOverMiddleFilters(records: Record<string, string>[]): OdFlow[] {
  const flows = new Map<string, OdFlow>();
  for (const r of records) {
    const key = [r.device_type, r.origin_zone_id, r.destination_zone_id, r.day_type, r.day_part].join("|");
    const traffic = numberOrNull(r.o_m_d_traffic) ?? 0;
    const seen = flows.get(key);
    if (seen) seen.odTraffic += traffic;
    else flows.set(key, flowOf(r, traffic));
  }
  return [...flows.values()];
}

export interface Slice {
  deviceType: string;
  dayType: string;
  dayPart: string;
}

/** `2: Peak AM (6am-10am)` → 2: labels are ordered by the index the server gives them (request order). */
const labelIndex = (label: string) => Number(/^(\d+):/.exec(label)?.[1] ?? Number.MAX_SAFE_INTEGER);
const byLabelIndex = (a: string, b: string) => labelIndex(a) - labelIndex(b) || a.localeCompare(b);

/** The device types (in row order), day types and day parts (in request order) the rows hold. */
export function sliceOptions(flows: OdFlow[]): {
  deviceTypes: string[];
  dayTypes: string[];
  dayParts: string[];
} {
  const distinct = (key: keyof Slice) => [...new Set(flows.map((f) => f[key]))];
  return {
    deviceTypes: distinct("deviceType"),
    dayTypes: distinct("dayType").sort(byLabelIndex),
    dayParts: distinct("dayPart").sort(byLabelIndex),
  };
}

export const pairKey = (f: Pick<OdFlow, "originName" | "destinationName">) =>
  JSON.stringify([f.originName, f.destinationName]);

/**
 * The flows of one slice, one per origin-destination pair: pairs that occur twice (zones of the same name
 * in two of the analysis' zone sets) are summed, their durations weighted by traffic.
 */
export function flowsInSlice(flows: OdFlow[], slice: Slice): OdFlow[] {
  const pairs = new Map<string, OdFlow>();
  for (const f of flows) {
    if (f.deviceType !== slice.deviceType || f.dayType !== slice.dayType || f.dayPart !== slice.dayPart)
      continue;
    const key = pairKey(f);
    const seen = pairs.get(key);
    if (!seen) pairs.set(key, { ...f });
    else pairs.set(key, mergeFlows(seen, f));
  }
  return [...pairs.values()];
}

function mergeFlows(a: OdFlow, b: OdFlow): OdFlow {
  const traffic = a.odTraffic + b.odTraffic;
  const duration =
    a.avgTripDuration === null || b.avgTripDuration === null || traffic === 0
      ? (a.avgTripDuration ?? b.avgTripDuration)
      : Math.round((a.avgTripDuration * a.odTraffic + b.avgTripDuration * b.odTraffic) / traffic);
  return {
    ...a,
    odTraffic: traffic,
    originTraffic: a.originTraffic + b.originTraffic,
    destinationTraffic: a.destinationTraffic + b.destinationTraffic,
    avgTripDuration: duration,
  };
}

export type SortColumn =
  "originName" | "destinationName" | "odTraffic" | "originTraffic" | "destinationTraffic" | "avgTripDuration";
export type SortDirection = "ascending" | "descending";

/** Sorted copy; numbers numerically (no value last), names alphabetically, ties by origin then destination. */
export function sortFlows(flows: OdFlow[], column: SortColumn, direction: SortDirection): OdFlow[] {
  const sign = direction === "ascending" ? 1 : -1;
  const byPair = (a: OdFlow, b: OdFlow) =>
    a.originName.localeCompare(b.originName) || a.destinationName.localeCompare(b.destinationName);
  const compare = (a: OdFlow, b: OdFlow): number => {
    const [x, y] = [a[column], b[column]];
    if (x === y) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return sign * (typeof x === "number" ? x - (y as number) : x.localeCompare(y as string));
  };
  return [...flows].sort((a, b) => compare(a, b) || byPair(a, b));
}

/** The `n` largest flows (all when n is null). */
export const topFlows = (flows: OdFlow[], n: number | null): OdFlow[] =>
  sortFlows(flows, "odTraffic", "descending").slice(0, n ?? undefined);

/**
 * Traffic per day part for one device type and day type: summed over all pairs, or of one pair when given.
 * `dayParts` are the analysis' day part labels, so parts without trips show as 0 (default: those in the
 * rows). Day parts overlap (All Day holds the others), so the bars are not meant to be added.
 */
export function dayPartProfile(
  flows: OdFlow[],
  slice: Pick<Slice, "deviceType" | "dayType">,
  pair?: Pick<OdFlow, "originName" | "destinationName">,
  dayParts = sliceOptions(flows).dayParts,
): { dayPart: string; traffic: number }[] {
  const wanted = pair ? pairKey(pair) : null;
  const totals = new Map(dayParts.map((p) => [p, 0]));
  for (const f of flows) {
    const total = totals.get(f.dayPart);
    const inSlice = f.deviceType === slice.deviceType && f.dayType === slice.dayType;
    if (total !== undefined && inSlice && (!wanted || pairKey(f) === wanted))
      totals.set(f.dayPart, total + f.odTraffic);
  }
  return [...totals].map(([dayPart, traffic]) => ({ dayPart, traffic }));
}

/** Zone anchors by lower-cased name (names are unique per set, case-insensitively); the first set wins. */
export function zoneAnchors(zones: Feature[]): Map<string, LngLat> {
  const anchors = new Map<string, LngLat>();
  for (const zone of zones) {
    const name = String(zone.properties?.name ?? "").toLowerCase();
    const anchor = zoneAnchor(zone.geometry);
    if (anchor && !anchors.has(name)) anchors.set(name, anchor);
  }
  return anchors;
}

export interface FlowProperties {
  kind: "flow" | "arrow" | "intra" | "segment";
  key: string;
  origin: string;
  destination: string;
  traffic: number;
  /** traffic / the largest traffic drawn, 0..1: drives width and colour. */
  share: number;
}

/**
 * The map's features for the flows: a curved line and a direction arrow per pair between two zones, a point
 * for trips within one zone. Flows whose zones have no known position are counted in `unplaced`.
 */
export function flowFeatures(
  flows: OdFlow[],
  origins: Map<string, LngLat>,
  destinations: Map<string, LngLat>,
): { collection: FeatureCollection; unplaced: number } {
  const max = Math.max(1, ...flows.map((f) => f.odTraffic));
  const features: Feature[] = [];
  let unplaced = 0;
  // Smallest first, so the largest flows are drawn on top.
  for (const f of [...flows].sort((a, b) => a.odTraffic - b.odTraffic)) {
    const from = origins.get(f.originName.toLowerCase());
    const to = destinations.get(f.destinationName.toLowerCase());
    if (!from || !to) {
      unplaced++;
      continue;
    }
    const base = {
      key: pairKey(f),
      origin: f.originName,
      destination: f.destinationName,
      traffic: f.odTraffic,
      share: f.odTraffic / max,
    };
    const props = (kind: FlowProperties["kind"], extra = {}) => ({ ...base, kind, ...extra });
    if (f.originName.toLowerCase() === f.destinationName.toLowerCase() || samePoint(from, to)) {
      features.push({
        type: "Feature",
        properties: props("intra"),
        geometry: { type: "Point", coordinates: from },
      });
      continue;
    }
    const arc = flowArc(from, to);
    features.push(
      { type: "Feature", properties: props("flow"), geometry: { type: "LineString", coordinates: arc.line } },
      {
        type: "Feature",
        properties: props("arrow", { bearing: arc.bearing }),
        geometry: { type: "Point", coordinates: arc.arrow },
      },
    );
  }
  return { collection: { type: "FeatureCollection", features }, unplaced };
}

const samePoint = (a: LngLat, b: LngLat) => a[0] === b[0] && a[1] === b[1];

/** Zone activity's home and work locations: home_grid_all, work_admin_8_bike, … (docs/analyses.md). */
export const isHomeWorkMetric = (metric: string) =>
  new RegExp(`^(home|work)_[a-z0-9_]+_(${SUFFIXES.join("|")})$`).test(metric);

/** The name a home/work place is drawn and listed under. */
export const SUPPRESSED_PLACES = "Places with fewer than 5 devices";
const placeName = (r: Record<string, string>) =>
  r.grid_id === "suppressed" || r.area_id === "suppressed"
    ? SUPPRESSED_PLACES
    : r.grid_id !== undefined
      ? `Cell ${r.grid_id}`
      : (r.area_name ?? r.area_id);

/**
 * A home/work metric as flows from each zone to the places its travellers live (work) in: the traveller
 * kind stands where the device type does, the value is the place's share of the kind's trips in percent.
 * Grid rows carry their cell's bounds, which become the places' polygons (preset areas come from the
 * server's preset geography instead).
 */
export function parseHomeWorkCsv(text: string): { flows: OdFlow[]; cells: Feature[] } {
  const { columns, records } = csvRecords(text);
  if (!columns.includes("trip_share") || !columns.includes("traveler_type"))
    throw new Error("not a home or work location metric: no trip_share or traveler_type column");
  const cells = new Map<string, Feature>();
  const flows = records.map((r): OdFlow => {
    const name = placeName(r);
    const share = Math.round((numberOrNull(r.trip_share) ?? 0) * 1000) / 10;
    const bounds = ["grid_west", "grid_south", "grid_east", "grid_north"].map((c) => numberOrNull(r[c]));
    if (bounds.every((b) => b !== null) && !cells.has(name)) {
      cells.set(name, { type: "Feature", properties: { name }, geometry: boxPolygon(bounds as number[]) });
    }
    return {
      deviceType: r.traveler_type,
      originId: r.zone_id,
      originName: r.zone_name,
      destinationId: r.grid_id ?? r.area_id,
      destinationName: name,
      dayType: r.day_type,
      dayPart: r.day_part,
      odTraffic: share,
      originTraffic: share,
      destinationTraffic: share,
      avgTripDuration: null,
    };
  });
  return { flows, cells: [...cells.values()] };
}

/** What one row of the results table is, by analysis type. */
const TABLE_CAPTIONS: Record<AnalysisTypeName, string> = {
  OD_Analysis: "Origin-destination flows",
  OD_Preset_Geography: "Flows from the zones to the preset areas",
  Zone_Activity_Analysis: "Trips per zone",
  OD_MF_Analysis: "Origin-destination flows through the middle filters",
  Segment_Analysis: "Trips per road segment",
  AADT: "Average daily traffic per zone",
  Network_OD: "Flows between road segments",
  Network_Performance: "Speeds per road segment",
  Top_Routes_OD: "Top routes",
  Top_Routes_ZA: "Top routes",
};

/**
 * The results table's caption for an analysis type and the metric shown; a Network_Performance result of
 * `metric_type=travel_time` has no speeds (`measure`, from parseNpCsv).
 */
export function captionOf(analysisType: string, metric = "", measure: NpMeasure = "speed"): string {
  if (isHomeWorkMetric(metric)) return "Home and work locations";
  if (analysisType === "Network_Performance" && measure === "travel_time")
    return "Travel times per road segment";
  return TABLE_CAPTIONS[analysisType as AnalysisTypeName] ?? "Origin-destination flows";
}

/**
 * The results drawer's heading: what the results shown are, then the analysis' name. It follows the
 * metric, as the caption does: a zone activity's home/work metric shows places, not trips per zone.
 */
export const headingOf = (
  analysisType: string,
  name: string,
  metric = "",
  measure: NpMeasure = "speed",
): string => `${captionOf(analysisType, metric, measure)}: ${name}`;

/** Places a home/work chart shows at most (the largest shares). */
const CHARTED_PLACES = 10;

/**
 * A home/work slice's places for one zone, largest share first (the first `CHARTED_PLACES`): each share is
 * of that zone's travellers of the slice's kind, so they add up to at most 100 %. Shares of different zones
 * are of different trips and must not be added, hence one zone at a time.
 */
export function placeShares(slice: OdFlow[], zoneName: string): { place: string; share: number }[] {
  return sortFlows(
    slice.filter((f) => f.originName === zoneName),
    "odTraffic",
    "descending",
  )
    .slice(0, CHARTED_PLACES)
    .map((f) => ({ place: f.destinationName, share: f.odTraffic }));
}

/** The zone a home/work chart is drawn for: the chosen row's, else the slice's only one (null with several). */
export function chartedZone(slice: OdFlow[], chosen: OdFlow | undefined): string | null {
  if (chosen) return chosen.originName;
  const zones = new Set(slice.map((f) => f.originName));
  return zones.size === 1 ? [...zones][0] : null;
}
