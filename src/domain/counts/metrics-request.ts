import type { TraceSource } from "../../engine/trips/types.js";
import type { YearMonth } from "../records.js";
import { fail } from "../errors.js";

import {
  COUNTS_DAY_TYPES,
  DAY_PARTS,
  DIRECTIONS,
  METRIC_FIELDS,
  type DayPart,
  type Direction,
  type MetricField,
} from "../../shared/vocabulary.js";

// The counts interface's vocabulary is shared with the web client (src/shared/vocabulary.ts).
export { DAY_PARTS, DIRECTIONS, METRIC_FIELDS, type DayPart, type Direction, type MetricField };

/** Day types and their days of week (ISO: 1 = Monday … 7 = Sunday). */
export const DAY_TYPES: Record<string, readonly number[]> = COUNTS_DAY_TYPES;

/** Vendor source names → our trace sources: location-based devices and telematics. */
export const METRIC_SOURCES: Record<string, TraceSource> = { lbs_plus: "lbs", agps: "telematics" };

export interface MetricsRequestInput {
  fields: string[];
  day_part: string | number;
  day_type: string;
  direction: string;
  date: { year: number; month?: number };
  data_version: number;
  source?: string;
}

export interface MetricsFilters {
  fields: MetricField[];
  dayPart: DayPart;
  dayType: string;
  daysOfWeek: readonly number[];
  direction: Direction;
  months: YearMonth[];
  sources: TraceSource[];
  dataVersion: number;
}

/** Validates the metrics-only parameters; every failure is a 400 naming its field. */
export function parseMetricsFilters(input: MetricsRequestInput): MetricsFilters {
  const dayType = oneOf(input.day_type, Object.keys(DAY_TYPES), "day_type");
  return {
    fields: parseFields(input.fields),
    dayPart: parseDayPart(input.day_part),
    dayType,
    daysOfWeek: DAY_TYPES[dayType],
    direction: oneOf(input.direction, DIRECTIONS, "direction"),
    months: parseDate(input.date),
    sources: input.source === undefined ? ["lbs", "telematics"] : [parseSource(input.source)],
    dataVersion: input.data_version,
  };
}

function parseFields(fields: string[]): MetricField[] {
  if (fields.length === 0) throw fail("invalid_fields", undefined, "fields");
  const unknown = fields.filter((f) => !(METRIC_FIELDS as readonly string[]).includes(f));
  if (unknown.length > 0)
    throw fail(
      "unknown_field",
      { fields: unknown.map((f) => `"${f}"`).join(", "), valid: METRIC_FIELDS.join(", ") },
      "fields",
    );
  const repeated = fields.filter((f, i) => fields.indexOf(f) !== i);
  if (repeated.length > 0)
    throw fail("duplicate_field", { fields: [...new Set(repeated)].join(", ") }, "fields");
  return fields as MetricField[];
}

function parseDayPart(value: string | number): DayPart {
  const text = String(value).trim().toLowerCase();
  if (text === "all") return DAY_PARTS[0];
  const index = /^\d+$/.test(text) ? Number(text) : NaN;
  const part = DAY_PARTS[index];
  if (!part)
    throw fail(
      "invalid_day_part",
      { valid: DAY_PARTS.map((p) => `${p.index} ${p.name}`).join(", ") },
      "day_part",
    );
  return part;
}

/** The request fields `oneOf` checks, each with its own code. */
const CHOICE_CODES = {
  day_type: "invalid_day_type",
  direction: "invalid_direction",
  source: "invalid_source",
} as const;

function oneOf<T extends string>(value: string, valid: readonly T[], field: keyof typeof CHOICE_CODES): T {
  const v = value.trim().toLowerCase();
  if ((valid as readonly string[]).includes(v)) return v as T;
  throw fail(CHOICE_CODES[field], { value, valid: valid.join(", ") }, field);
}

function parseSource(value: string): TraceSource {
  const name = oneOf(value, Object.keys(METRIC_SOURCES), "source");
  return METRIC_SOURCES[name];
}

/** `{year}` is the twelve months of the year; `{year, month}` one month. */
function parseDate(date: { year: number; month?: number }): YearMonth[] {
  if (!Number.isInteger(date.year) || date.year < 1970 || date.year > 2100)
    throw fail("invalid_date", { reason: "date.year must be a year from 1970 to 2100" }, "date.year");
  if (date.month === undefined)
    return Array.from({ length: 12 }, (_, i) => ({ year: date.year, month: i + 1 }));
  if (!Number.isInteger(date.month) || date.month < 1 || date.month > 12)
    throw fail("invalid_date", { reason: "date.month must be 1 to 12" }, "date.month");
  return [{ year: date.year, month: date.month }];
}
