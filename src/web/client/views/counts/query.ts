/**
 * What the counts explorer asks of the counts interface (/counts/v1), as plain data: the choices the panel
 * offers (the API's documented values, docs/segment-counts.md), the request bodies built from them, and the
 * quota cost of a metrics call. No DOM here, so it is unit-tested under Node.
 */

import {
  COUNTS_DAY_TYPES,
  COUNTS_MODES,
  DAY_PARTS as SHARED_DAY_PARTS,
  DIRECTIONS as SHARED_DIRECTIONS,
  type CountsDayType,
  type CountsModeName,
  type Direction,
  type MetricField,
} from "../../../../shared/vocabulary.js";

export type LonLat = [number, number];

/** A choice of the panel: the API's value (src/shared/vocabulary.ts) and the words shown for it. */
interface Choice<T> {
  value: T;
  label: string;
}

const choices = <T extends string>(values: readonly T[], labels: Record<T, string>): Choice<T>[] =>
  values.map((value) => ({ value, label: labels[value] }));

export const MODES = choices<CountsModeName>(COUNTS_MODES, {
  vehicle: "Vehicles",
  truck: "Trucks",
  bike: "Bicycles",
  ped: "Pedestrians",
});

const capitalised = (d: string) => d[0].toUpperCase() + d.slice(1);

export const DAY_TYPES = choices(Object.keys(COUNTS_DAY_TYPES) as CountsDayType[], {
  all: "All days",
  weekday: "Weekdays (Mon–Fri)",
  weekend: "Weekend (Sat–Sun)",
  ...(Object.fromEntries(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => [
      d,
      capitalised(d),
    ]),
  ) as Record<Exclude<CountsDayType, "all" | "weekday" | "weekend">, string>),
});

const hours = (h: number) => String(h).padStart(2, "0");

/** Day parts by index, hours inclusive: "Mid-day (10–14 h)". */
export const DAY_PARTS: Choice<number>[] = SHARED_DAY_PARTS.map((p) => ({
  value: p.index,
  label: `${p.name.replace(/\bDay\b/, "day")} (${hours(p.startHour)}–${hours(p.endHour)} h)`,
}));

export const DIRECTIONS = choices<Direction>(SHARED_DIRECTIONS, {
  bidirectional: "Both directions",
  with: "Along the segment's drawing direction",
  against: "Against the drawing direction",
});

/**
 * Radius bounds in metres. The API takes up to 50 km, but a city radius of a few kilometres already selects
 * thousands of segments, each charged per field: the panel stops at 5 km.
 */
export const RADIUS_M = { min: 25, max: 5_000, step: 25, initial: 300 } as const;

/** Columns of the map's metrics call (each charged per selected segment). */
export const MAP_FIELDS = [
  "segment_id",
  "trips_volume",
  "vmt",
  "avg_speed",
  "road_class",
] as const satisfies readonly MetricField[];
/** Columns of a segment's monthly series. */
export const MONTHLY_FIELDS = [
  "year_month",
  "trips_volume",
  "avg_speed",
] as const satisfies readonly MetricField[];

/** `data_version` the page sends (echoed by the API). */
export const DATA_VERSION = 1;

export interface CountsFilters {
  country: string;
  mode: string;
  /** "YYYY-MM" */
  month: string;
  dayType: string;
  dayPart: number;
  direction: string;
}

export interface CountsQuery extends CountsFilters {
  point: LonLat;
  radiusM: number;
}

export const clampRadius = (m: number) =>
  Number.isFinite(m) ? Math.min(RADIUS_M.max, Math.max(RADIUS_M.min, Math.round(m))) : RADIUS_M.initial;

/** The radius selector: any part of a segment within the circle counts (the API's default mode). */
export function radiusSelector(point: LonLat, radiusM: number) {
  return {
    radius: {
      point: { type: "point", coordinates: point.map(round6) },
      geom_mode: "intersects",
      buffer: radiusM,
      unit: "m",
    },
  };
}

/** Body of /geometry and /segmentcount: the segments the mode may use around the place. */
export function selectionBody(q: Pick<CountsQuery, "country" | "mode" | "point" | "radiusM">) {
  return { geometry: radiusSelector(q.point, q.radiusM), country: q.country, mode: q.mode };
}

function filterMembers(f: CountsFilters) {
  return { day_part: f.dayPart, day_type: f.dayType, direction: f.direction, data_version: DATA_VERSION };
}

/** Body of the map's /metrics call: one month, every segment in the circle. */
export function metricsBody(q: CountsQuery) {
  const [year, month] = q.month.split("-").map(Number);
  return {
    ...selectionBody(q),
    fields: [...MAP_FIELDS],
    ...filterMembers(q),
    date: { year, month },
  };
}

/** Body of one year of a segment's monthly series (one call per year: `date: {year}` covers 12 months). */
export function monthlyBody(f: CountsFilters, segmentId: number, year: number) {
  return {
    geometry: { segment_ids: [segmentId] },
    country: f.country,
    mode: f.mode,
    fields: [...MONTHLY_FIELDS],
    ...filterMembers(f),
    date: { year },
  };
}

/** Units a metrics call is charged: segments selected × fields requested. */
export const quotaUnits = (segments: number, fields: number) => segments * fields;

/** A stable cache key of a request (member order as built above). */
export const requestKey = (path: string, body: unknown) => `${path} ${JSON.stringify(body)}`;

/** Rows of a columns/data answer as objects keyed by column. */
export function recordsOf<T>(columns: readonly string[], data: readonly unknown[][]): T[] {
  return data.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])) as T);
}

/** "2026-06" ↔ {year, month} of the date ranges answer. */
export const monthValue = (m: { year: number; month: number }) =>
  `${m.year}-${String(m.month).padStart(2, "0")}`;

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;
