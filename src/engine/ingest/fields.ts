import { TRIP_PURPOSES, VEHICLE_CLASSES, type TripPurpose, type VehicleClass } from "../trips/types.js";
import type { TracePoint } from "./types.js";

/** Below this an epoch number is seconds, above it milliseconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const EPOCH_MS_THRESHOLD = 1e11;

/**
 * Epoch milliseconds of an ISO-8601 timestamp or a number of epoch seconds or
 * milliseconds (told apart by magnitude). ISO times without a zone are read as UTC.
 */
export function parseTimestamp(raw: string): number | string {
  const sameHour = withinLastHour(raw);
  if (sameHour >= 0) return sameHour;
  const utc = raw.length === 24 ? canonicalUtc(raw, 0) : -1;
  if (utc >= 0) {
    rememberHour(raw, utc);
    return utc;
  }
  const s = raw.trim();
  if (s === "") return "timestamp is missing";
  if (/^-?\d+(\.\d+)?$/.test(s)) {
    const n = Number(s);
    return Math.round(Math.abs(n) < EPOCH_MS_THRESHOLD ? n * 1000 : n);
  }
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(s)) return `timestamp "${s}" is not ISO-8601 or epoch`;
  const iso = s.replace(" ", "T");
  const withZone = /(Z|[+-]\d{2}(:?\d{2})?)$/i.test(iso) ? normaliseOffset(iso) : `${iso}Z`;
  const t = Date.parse(withZone);
  if (Number.isNaN(t)) return `timestamp "${s}" is not a valid date`;
  rememberHour(s, t);
  return t;
}

/**
 * The hour (`YYYY-MM-DDTHH`) of the last `YYYY-MM-DDTHH:MM:SS.sssZ` timestamp parsed in full, and its epoch
 * ms: a trace's rows mostly fall in the hour of the row before, and reading only the minutes, seconds and
 * milliseconds of those took a third of the time of the regular expressions and Date.parse.
 */
const lastHour = { prefix: "", ms: 0 };

/** Epoch ms of `s` when it is `YYYY-MM-DDTHH:MM:SS.sssZ` in `lastHour`; -1 otherwise (then parsed in full). */
function withinLastHour(s: string, at = 0, end = s.length): number {
  if (end - at !== 24 || lastHour.prefix === "" || !s.startsWith(lastHour.prefix, at)) return -1;
  const offset = offsetInHour(s, at);
  return offset < 0 ? -1 : lastHour.ms + offset;
}

/**
 * parseTimestamp(text.slice(start, end)), read in place when the time falls in the last hour parsed in full
 * (a CSV reader's rows, without a string per cell).
 */
export function parseTimestampAt(text: string, start: number, end: number): number | string {
  const sameHour = withinLastHour(text, start, end);
  return sameHour >= 0 ? sameHour : parseTimestamp(text.slice(start, end));
}

/**
 * Epoch ms of `YYYY-MM-DDTHH:MM:SS.sssZ` at `at`, read by its digits (Date.UTC gives what Date.parse does
 * for such a time); -1 for any other shape, a year before 1970 or a day past the 28th (read in full). The
 * first time of each hour went through the regular expressions and Date.parse: a tenth of a CSV's reading.
 */
function canonicalUtc(s: string, at: number): number {
  const dash = 45;
  if (s.charCodeAt(at + 4) !== dash || s.charCodeAt(at + 7) !== dash || s.charCodeAt(at + 10) !== 84 /* T */)
    return -1;
  const offset = offsetInHour(s, at);
  const year = digits(s, at, 4);
  const month = digits(s, at + 5, 2);
  const day = digits(s, at + 8, 2);
  const hour = digits(s, at + 11, 2);
  if (offset < 0 || year < 1970 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23)
    return -1;
  return Date.UTC(year, month - 1, day, hour) + offset;
}

function rememberHour(s: string, t: number): void {
  if (s.length !== 24 || s.charCodeAt(10) !== 84 /* T */) return;
  const offset = offsetInHour(s);
  if (offset < 0) return;
  lastHour.prefix = s.slice(0, 13);
  lastHour.ms = t - offset;
}

/** Milliseconds into the hour of a `…THH:MM:SS.sssZ` timestamp at `at`; -1 when it has another shape or range. */
function offsetInHour(s: string, at = 0): number {
  const colon = 58;
  if (s.charCodeAt(at + 13) !== colon || s.charCodeAt(at + 16) !== colon) return -1;
  if (s.charCodeAt(at + 19) !== 46 /* . */ || s.charCodeAt(at + 23) !== 90 /* Z */) return -1;
  const minutes = digits(s, at + 14, 2);
  const seconds = digits(s, at + 17, 2);
  const ms = digits(s, at + 20, 3);
  if (minutes < 0 || minutes > 59 || seconds < 0 || seconds > 59 || ms < 0) return -1;
  return (minutes * 60 + seconds) * 1000 + ms;
}

/** The number written by `n` decimal digits at `at`; -1 if one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let value = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/** Date.parse wants "+02:00"; traces often carry "+0200" or "+02". */
function normaliseOffset(iso: string): string {
  return iso.replace(/([+-]\d{2})(\d{2})$/, "$1:$2").replace(/([+-]\d{2})$/, "$1:00");
}

export function parseLatitude(raw: string | number | undefined): number | string {
  return parseCoordinate(raw, "latitude", 90);
}

export function parseLongitude(raw: string | number | undefined): number | string {
  return parseCoordinate(raw, "longitude", 180);
}

function parseCoordinate(raw: string | number | undefined, name: string, limit: number): number | string {
  const text = typeof raw === "string" ? raw.trim() : raw;
  if (text === undefined || text === "") return `${name} is missing`;
  const v = Number(text);
  if (!Number.isFinite(v)) return `${name} "${text}" is not a number`;
  if (Math.abs(v) > limit) return `${name} ${v} is out of range`;
  return v;
}

/** An optional numeric column: undefined when empty, a message when unreadable. */
export function parseOptionalNumber(raw: string | undefined, name: string): number | undefined | string {
  const text = raw?.trim();
  if (!text) return undefined;
  const v = Number(text);
  return Number.isFinite(v) ? v : `${name} "${text}" is not a number`;
}

/** An optional vehicle class column; a class name is a string too, so the problem comes wrapped. */
export function parseVehicleClass(raw: string | undefined): VehicleClass | undefined | { problem: string } {
  const text = raw?.trim().toLowerCase();
  if (!text) return undefined;
  return (VEHICLE_CLASSES as readonly string[]).includes(text)
    ? (text as VehicleClass)
    : { problem: `vehicle class "${text}" is not one of ${VEHICLE_CLASSES.join(", ")}` };
}

/** An optional trip purpose column (hbw, hbo, nhbw, wbo); wrapped like the vehicle class. */
export function parseTripPurpose(raw: string | undefined): TripPurpose | undefined | { problem: string } {
  const text = raw?.trim().toLowerCase();
  if (!text) return undefined;
  return (TRIP_PURPOSES as readonly string[]).includes(text)
    ? (text as TripPurpose)
    : { problem: `trip purpose "${text}" is not one of ${TRIP_PURPOSES.join(", ")}` };
}

/** Largest income band: the store keeps bands in an Int8 column (-1 = unknown). */
export const MAX_INCOME_BAND = 127;

/** An optional income band column: an integer 0..127 (the generator uses 1..5, 0 for commercial vehicles). */
export function parseIncomeBand(raw: string | undefined): number | undefined | string {
  const text = raw?.trim();
  if (!text) return undefined;
  const v = Number(text);
  return Number.isInteger(v) && v >= 0 && v <= MAX_INCOME_BAND
    ? v
    : `income band "${text}" is not an integer from 0 to ${MAX_INCOME_BAND}`;
}

/** The optional columns of a trace point as raw text, however a format names or nests them. */
export interface OptionalFields {
  speed?: string;
  heading?: string;
  vehicleClass?: string;
  purpose?: string;
  incomeBand?: string;
}

/**
 * Reads the optional columns into `point` (those present only); answers the first problem, leaving the
 * point untouched, or undefined when all are readable.
 */
export function addOptionalFields(point: TracePoint, raw: OptionalFields): string | undefined {
  const speed = parseOptionalNumber(raw.speed, "speed");
  if (typeof speed === "string") return speed;
  const heading = parseOptionalNumber(raw.heading, "heading");
  if (typeof heading === "string") return heading;
  const vehicleClass = parseVehicleClass(raw.vehicleClass);
  if (typeof vehicleClass === "object") return vehicleClass.problem;
  const purpose = parseTripPurpose(raw.purpose);
  if (typeof purpose === "object") return purpose.problem;
  const incomeBand = parseIncomeBand(raw.incomeBand);
  if (typeof incomeBand === "string") return incomeBand;
  setOptionalFields(point, speed, heading, vehicleClass, purpose, incomeBand);
  return undefined;
}

/** Sets the optional fields that were read, always in this order (so every reader's points share one shape). */
export function setOptionalFields(
  point: TracePoint,
  speed: number | undefined,
  heading: number | undefined,
  vehicleClass: VehicleClass | undefined,
  purpose: TripPurpose | undefined,
  incomeBand: number | undefined,
): void {
  if (speed !== undefined) point.speed = speed;
  if (heading !== undefined) point.heading = heading;
  if (vehicleClass !== undefined) point.vehicleClass = vehicleClass;
  if (purpose !== undefined) point.purpose = purpose;
  if (incomeBand !== undefined) point.incomeBand = incomeBand;
}
