import type { Issue } from "../errors.js";
import {
  DEFAULT_DAY_PARTS as SHARED_DAY_PARTS,
  DEFAULT_DAY_TYPES as SHARED_DAY_TYPES,
} from "../../shared/vocabulary.js";

/**
 * The small text grammars of an analysis request: day types, day parts, bins
 * and percentile lists. Every parser returns the parsed value and pushes its
 * problems onto `issues` (with the request field), so one response lists them all.
 */

/** A day type: ISO weekdays `start..end` inclusive, 1 = Monday … 7 = Sunday. */
export interface DayType {
  name: string;
  start: number;
  end: number;
  /** As written in metric rows, e.g. `0: Average Day (M-Su)`. */
  label: string;
}

/** A day part: hours `start..end` inclusive, 0..23. */
export interface DayPart {
  name: string;
  start: number;
  end: number;
  /** As written in metric rows, e.g. `2: Peak AM (6am-10am)`. */
  label: string;
}

/** A value bin `[from, to)`; `to` null for the open last bin (`90+`). */
export interface Bin {
  from: number;
  to: number | null;
}

// The vendor defaults. Average Weekday is Monday to Thursday (`14`), as the spec lists it.
export const DEFAULT_DAY_TYPES = SHARED_DAY_TYPES.join(",");
export const DEFAULT_DAY_PARTS = SHARED_DAY_PARTS.join(",");

const DAY_LETTERS = ["M", "Tu", "W", "Th", "F", "Sa", "Su"];

/** `M-Su` for 1..7, `Tu` for a single day. */
export function daySpan(start: number, end: number): string {
  const first = DAY_LETTERS[start - 1];
  return start === end ? first : `${first}-${DAY_LETTERS[end - 1]}`;
}

/** 12-hour clock: 0 → 12am, 12 → 12pm, 15 → 3pm. */
function clock(hour: number): string {
  const h = hour % 12 === 0 ? 12 : hour % 12;
  return `${h}${hour % 24 < 12 ? "am" : "pm"}`;
}

/** The end hour is inclusive, so the label shows the hour after it: 0023 → `12am-12am`, 0609 → `6am-10am`. */
export function hourLabel(start: number, end: number): string {
  return `${clock(start)}-${clock((end + 1) % 24)}`;
}

export const dayTypeLabel = (index: number, d: { name: string; start: number; end: number }) =>
  `${index}: ${d.name} (${daySpan(d.start, d.end)})`;

export const dayPartLabel = (index: number, d: { name: string; start: number; end: number }) =>
  `${index}: ${d.name} (${hourLabel(d.start, d.end)})`;

interface NamedRange {
  name: string;
  start: number;
  end: number;
}

/**
 * Splits `<name>|<code>` items, checks names (non-empty, unique case-insensitively)
 * and hands each code to `parseCode`, which returns the range or an error message.
 */
function parseNamedRanges(
  text: string,
  field: string,
  what: string,
  parseCode: (code: string) => { start: number; end: number } | string,
  issues: Issue[],
): NamedRange[] {
  const out: NamedRange[] = [];
  const seen = new Set<string>();
  const items = text.split(",");
  items.forEach((raw, i) => {
    const item = raw.trim();
    const where = `${field}[${i}]`;
    if (item === "") return issues.push({ field: where, message: `empty ${what} item` });
    const bar = item.lastIndexOf("|");
    if (bar < 0)
      return issues.push({
        field: where,
        message: `"${item}" must be written <name>|<code>, the "|" is missing`,
      });
    const name = item.slice(0, bar).trim();
    const code = item.slice(bar + 1).trim();
    if (name === "") return issues.push({ field: where, message: `"${item}" has an empty name` });
    if (seen.has(name.toLowerCase()))
      return issues.push({ field: where, message: `${what} name "${name}" is given twice` });
    seen.add(name.toLowerCase());
    const parsed = parseCode(code);
    if (typeof parsed === "string") return issues.push({ field: where, message: `"${item}": ${parsed}` });
    out.push({ name, ...parsed });
  });
  return out;
}

function parseDayCode(code: string): { start: number; end: number } | string {
  if (!/^\d{2}$/.test(code)) return "the code must be two weekday digits 1-7 (1 = Monday), e.g. 15";
  const [start, end] = [Number(code[0]), Number(code[1])];
  if (start < 1 || start > 7 || end < 1 || end > 7) return "weekdays are 1 (Monday) to 7 (Sunday)";
  if (end < start) return "the end day is before the start day (ranges do not wrap past Sunday)";
  return { start, end };
}

function parseHourCode(code: string): { start: number; end: number } | string {
  if (!/^\d{4}$/.test(code)) return "the code must be two two-digit hours 00-23, e.g. 0609";
  const [start, end] = [Number(code.slice(0, 2)), Number(code.slice(2))];
  if (start > 23 || end > 23) return "hours are 00 to 23";
  if (end < start) return "the end hour is before the start hour (day parts do not wrap past midnight)";
  return { start, end };
}

export function parseDayTypes(text: string, issues: Issue[], field = "day_types"): DayType[] {
  return parseNamedRanges(text, field, "day type", parseDayCode, issues).map((d, i) => ({
    ...d,
    label: dayTypeLabel(i, d),
  }));
}

export function parseDayParts(text: string, issues: Issue[], field = "day_parts"): DayPart[] {
  return parseNamedRanges(text, field, "day part", parseHourCode, issues).map((d, i) => ({
    ...d,
    label: dayPartLabel(i, d),
  }));
}

const NUMBER = "(\\d+(?:\\.\\d+)?)";
const CLOSED_BIN = new RegExp(`^${NUMBER}\\s*-\\s*${NUMBER}$`);
const OPEN_BIN = new RegExp(`^${NUMBER}\\s*\\+$`);

/** `0-10,10-20,…,90+`: contiguous, increasing bins; only the last may be open. */
export function parseBins(text: string, field: string, issues: Issue[]): Bin[] {
  const bins: Bin[] = [];
  const items = text.split(",").map((s) => s.trim());
  for (const [i, item] of items.entries()) {
    const where = `${field}[${i}]`;
    const closed = CLOSED_BIN.exec(item);
    const open = OPEN_BIN.exec(item);
    const bin: Bin | null = closed
      ? { from: Number(closed[1]), to: Number(closed[2]) }
      : open
        ? { from: Number(open[1]), to: null }
        : null;
    const problem = !bin
      ? `"${item}" is not a bin; write <from>-<to> or <from>+ (last bin only), e.g. 0-10,10-20,20+`
      : bin.to !== null && bin.to <= bin.from
        ? `"${item}": the upper bound must be greater than the lower one`
        : bin.to === null && i !== items.length - 1
          ? `"${item}": only the last bin may be open-ended`
          : i > 0 && bins[i - 1].to !== bin.from
            ? `"${item}" does not start where the previous bin ends (${bins[i - 1].to}); bins must be contiguous`
            : null;
    if (problem) {
      issues.push({ field: where, message: problem });
      return [];
    }
    bins.push(bin!);
  }
  return bins;
}

/** `5,50,95`: integer percentiles 1..99, returned sorted without duplicates. */
export function parsePercentiles(text: string, field: string, issues: Issue[]): number[] {
  const values = new Set<number>();
  text.split(",").forEach((raw, i) => {
    const item = raw.trim();
    const n = /^\d{1,2}$/.test(item) ? Number(item) : NaN;
    if (!(n >= 1 && n <= 99))
      issues.push({ field: `${field}[${i}]`, message: `"${item}" is not a whole percentile 1 to 99` });
    else values.add(n);
  });
  return [...values].sort((a, b) => a - b);
}
