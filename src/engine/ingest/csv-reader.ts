import { basename } from "node:path";
import { readText, type OnBytes } from "./open-input.js";
import {
  addOptionalFields,
  parseIncomeBand,
  parseLatitude,
  parseLongitude,
  parseOptionalNumber,
  parseTimestamp,
  parseTimestampAt,
  parseTripPurpose,
  parseVehicleClass,
  setOptionalFields,
} from "./fields.js";
import type { TracePoint, TraceRecord } from "./types.js";

type Column =
  "device" | "time" | "lat" | "lon" | "speed" | "heading" | "vehicleClass" | "purpose" | "incomeBand";

/** Header names per column; `TrackID/Latitude/Longitude/Time` is the OSRM trace CSV. */
const HEADER_ALIASES: Record<string, Column> = {
  device_id: "device",
  device: "device",
  deviceid: "device",
  id: "device",
  trackid: "device",
  track_id: "device",
  timestamp: "time",
  time: "time",
  t: "time",
  lat: "lat",
  latitude: "lat",
  lon: "lon",
  lng: "lon",
  longitude: "lon",
  speed: "speed",
  heading: "heading",
  bearing: "heading",
  course: "heading",
  vehicle_class: "vehicleClass",
  vehicleclass: "vehicleClass",
  trip_purpose: "purpose",
  purpose: "purpose",
  income_band: "incomeBand",
  incomeband: "incomeBand",
};

type ColumnIndex = Partial<Record<Column, number>>;

/** Column order of a file without a header row. */
const DEFAULT_COLUMNS: ColumnIndex = {
  device: 0,
  time: 1,
  lat: 2,
  lon: 3,
  speed: 4,
  heading: 5,
  vehicleClass: 6,
  purpose: 7,
  incomeBand: 8,
};

/**
 * Streams the points of a CSV trace, a batch per chunk read, so memory does
 * not grow with the file. The first row is a header when its latitude/longitude
 * cells are not numbers; otherwise columns follow
 * `device_id,timestamp,lat,lon[,speed,heading,vehicle_class,trip_purpose,income_band]`.
 * A batch parses its rows as it is iterated, so the rows of a chunk do not all live while the trips they
 * close are matched: parsed up front, a chunk's ~900 records outlived V8's young generation, ~19 of the
 * ~55 MB an ingest of the ingest bench's file copied into the old one.
 */
export async function* readCsvTrace(path: string, onBytes?: OnBytes): AsyncGenerator<Iterable<TraceRecord>> {
  const rows = new CsvRows(basename(path));
  let rest = "";
  for await (const chunk of readText(path, onBytes)) {
    const first = chunk.indexOf("\n");
    if (first < 0) {
      rest += chunk;
      continue;
    }
    // The line begun in the chunk before is read on its own: joined to the whole chunk, every row would
    // be read through a concatenated string, each character access ~a third slower than in the chunk.
    const line = rest + chunk.slice(0, first);
    yield rows.of(line, line.length);
    if (rows.stopped) return;
    const cut = chunk.lastIndexOf("\n");
    rest = chunk.slice(cut + 1);
    if (cut > first) yield rows.of(chunk, cut, first + 1);
    if (rows.stopped) return;
  }
  if (rest !== "") yield rows.of(rest, rest.length);
}

/** The rows of a CSV file, chunk by chunk: line numbers and the columns carry over from chunk to chunk. */
class CsvRows {
  private columns: ColumnIndex | null = null;
  /** The in-place reader of the columns, once they are known. */
  private plainRows: PlainRows | null = null;
  private lineNo = 0;
  private readonly deviceIds = new DeviceIds();
  /** Set when the header row lacks a needed column: nothing after it is read. */
  stopped = false;

  constructor(private readonly file: string) {}

  /** The records of the lines of `text` from `from` to `end` (a line break, or the text's end). */
  *of(text: string, end: number, from = 0): Generator<TraceRecord> {
    let quote = text.indexOf('"', from);
    for (let start = from; start <= end && !this.stopped;) {
      let lineEnd = text.indexOf("\n", start);
      if (lineEnd < 0 || lineEnd > end) lineEnd = end;
      if (quote >= 0 && quote < start) quote = text.indexOf('"', start);
      // Rows without quotes are read in place; anything the fast reader does not take is read in full.
      const point =
        this.plainRows && (quote < 0 || quote > lineEnd) ? this.plainRows.point(text, start, lineEnd) : null;
      let record: TraceRecord | null;
      if (point) {
        this.lineNo++;
        record = { point };
      } else record = this.recordOf(text.slice(start, lineEnd));
      start = lineEnd + 1;
      if (record) yield record;
    }
  }

  private recordOf(raw: string): TraceRecord | null {
    const { file } = this;
    this.lineNo++;
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (this.lineNo === 1 && line.startsWith("\uFEFF")) line = line.slice(1); // byte order mark of spreadsheet exports
    if (line.trim() === "") return null;
    const cells = splitCsvLine(line);
    if (this.columns === null) {
      const header = headerColumns(cells);
      if (typeof header === "string") {
        this.stopped = true;
        return { problem: { file, line: this.lineNo, message: header } };
      }
      this.columns = header ?? DEFAULT_COLUMNS;
      this.plainRows = new PlainRows(this.columns, this.deviceIds);
      if (header) return null;
    }
    const point = pointOfRow(cells, this.columns);
    if (typeof point === "string") return { problem: { file, line: this.lineNo, message: point } };
    point.deviceId = this.deviceIds.own(point.deviceId);
    return { point };
  }
}

/** Column positions from a header row; null when the row is data; a message when a needed column is missing. */
function headerColumns(cells: string[]): ColumnIndex | null | string {
  const looksLikeData = cells.length >= 4 && cells.slice(2, 4).every((c) => c.trim() !== "" && !isNaN(+c));
  if (looksLikeData) return null;
  const index: ColumnIndex = {};
  cells.forEach((name, i) => {
    const column = HEADER_ALIASES[name.trim().toLowerCase()];
    if (column && index[column] === undefined) index[column] = i;
  });
  const missing = (["device", "time", "lat", "lon"] as const).filter((c) => index[c] === undefined);
  if (missing.length > 0)
    return `header lacks column(s) ${missing.join(", ")}; expected device_id,timestamp,lat,lon[,speed,heading,vehicle_class,trip_purpose,income_band]`;
  return index;
}

function pointOfRow(cells: string[], col: ColumnIndex): TracePoint | string {
  const deviceId = cellOf(cells, col.device)?.trim();
  if (!deviceId) return "device id is missing";
  const lat = parseLatitude(cellOf(cells, col.lat));
  if (typeof lat === "string") return lat;
  const lon = parseLongitude(cellOf(cells, col.lon));
  if (typeof lon === "string") return lon;
  const t = parseTimestamp(cellOf(cells, col.time) ?? "");
  if (typeof t === "string") return t;
  const point: TracePoint = { deviceId, lon, lat, t };
  // Optional columns, most often absent: checked only when the row has them.
  if (cells.length > 4) {
    const problem = addOptionalFields(point, {
      speed: cellOf(cells, col.speed),
      heading: cellOf(cells, col.heading),
      vehicleClass: cellOf(cells, col.vehicleClass),
      purpose: cellOf(cells, col.purpose),
      incomeBand: cellOf(cells, col.incomeBand),
    });
    if (problem) return problem;
  }
  return point;
}

function cellOf(cells: string[], index: number | undefined): string | undefined {
  return index === undefined ? undefined : cells[index];
}

/** Splits one CSV line (RFC 4180 quoting, no line breaks inside fields). */
export function splitCsvLine(line: string): string[] {
  if (!line.includes('"')) return line.split(",");
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      cells.push(cell);
      cell = "";
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

/**
 * Device ids as strings of their own. V8 cuts a substring of 13 characters or more (a UUID, a hashed
 * advertising id) as a view that keeps its whole text piece (16 KB) alive for as long as the id is held: by
 * the device's open trip, by the trips matching in flight, by the batch's trip columns. Reading 50,000 rows
 * of UUID ids and holding them kept the file's whole text (3.8 MB) alive. Rows come device after device
 * (the last id is compared in place, no string is cut) or interleaved (the ids seen lately are looked up).
 */
class DeviceIds {
  private last = "";
  private readonly seen = new Map<string, string>();

  /** The id in text[start, end). */
  at(text: string, start: number, end: number): string {
    const last = this.last;
    if (end - start === last.length && text.startsWith(last, start)) return last;
    return this.own(text.slice(start, end));
  }

  /** The same id as a string of its own. */
  own(id: string): string {
    if (id === this.last) return this.last;
    let own = this.seen.get(id);
    if (own === undefined) {
      // A file of many devices keeps the table to those seen lately.
      if (this.seen.size >= MAX_DEVICE_IDS_SEEN) this.seen.clear();
      // Text decoded from UTF-8 holds no lone surrogates: the round trip gives the very same characters.
      own = id.length < MIN_SLICED_LENGTH ? id : Buffer.from(id, "utf8").toString("utf8");
      this.seen.set(own, own);
    }
    return (this.last = own);
  }
}

const MAX_DEVICE_IDS_SEEN = 100_000;
/** V8 copies shorter substrings (SlicedString::kMinLength). */
const MIN_SLICED_LENGTH = 13;

/** More cells than any trace column layout has: a longer row is read in full. */
const MAX_PLAIN_CELLS = 32;
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * The usual row read where it lies in the chunk's text: no quotes, no padding, plain decimals, every
 * value valid. Splitting each row into strings and parsing them with Number() took most of the reading
 * time of an ingest. A row it does not take (answers null) is read by pointOfRow, which gives the same
 * point or says what is wrong; so this reader never decides a problem.
 */
class PlainRows {
  private readonly starts = new Int32Array(MAX_PLAIN_CELLS);
  private readonly ends = new Int32Array(MAX_PLAIN_CELLS);
  private cells = 0;
  /** The last vehicle class and purpose cells and what they read as: a trace repeats them row after row. */
  private readonly classes = new LastParsed(parseVehicleClass);
  private readonly purposes = new LastParsed(parseTripPurpose);

  constructor(
    private readonly col: ColumnIndex,
    private readonly deviceIds: DeviceIds,
  ) {}

  point(text: string, start: number, end: number): TracePoint | null {
    if (end > start && text.charCodeAt(end - 1) === 13) end--; // \r\n line ends
    if (!this.cut(text, start, end)) return null;
    const { col } = this;
    const deviceId = this.deviceId(text, col.device);
    const lat = this.decimal(text, col.lat, 90);
    const lon = this.decimal(text, col.lon, 180);
    if (deviceId === null || Number.isNaN(lat) || Number.isNaN(lon) || col.time === undefined) return null;
    if (col.time >= this.cells) return null;
    const t = parseTimestampAt(text, this.starts[col.time], this.ends[col.time]);
    if (typeof t === "string") return null;
    const point: TracePoint = { deviceId, lon, lat, t };
    return this.cells > 4 ? this.withOptionalFields(text, point) : point;
  }

  /** Cell bounds at the commas; false when the row has more cells than room. */
  private cut(text: string, start: number, end: number): boolean {
    let n = 0;
    for (let from = start; ; n++) {
      if (n === MAX_PLAIN_CELLS) return false;
      const comma = text.indexOf(",", from);
      this.starts[n] = from;
      if (comma < 0 || comma >= end) {
        this.ends[n] = end;
        break;
      }
      this.ends[n] = comma;
      from = comma + 1;
    }
    this.cells = n + 1;
    return true;
  }

  /** A device id without padding (else null: pointOfRow trims it, or says it is missing). */
  private deviceId(text: string, i: number | undefined): string | null {
    if (i === undefined || i >= this.cells) return null;
    const [s, e] = [this.starts[i], this.ends[i]];
    if (e === s || !isPlainChar(text.charCodeAt(s)) || !isPlainChar(text.charCodeAt(e - 1))) return null;
    return this.deviceIds.at(text, s, e);
  }

  /**
   * A cell of the form -?digits[.digits] with at most 15 digits, within ±limit; NaN otherwise. The digits
   * as a whole number divided by a power of ten are two exact doubles, and IEEE division rounds correctly:
   * the very number Number() reads.
   */
  private decimal(text: string, i: number | undefined, limit: number): number {
    if (i === undefined || i >= this.cells) return NaN;
    let at = this.starts[i];
    const end = this.ends[i];
    const negative = text.charCodeAt(at) === 45; // -
    if (negative) at++;
    let whole = 0;
    let digits = 0;
    let decimals = -1;
    for (; at < end; at++) {
      const c = text.charCodeAt(at);
      if (c === 46 /* . */ && decimals < 0) decimals = 0;
      else if (c >= 48 && c <= 57) {
        whole = whole * 10 + (c - 48);
        digits++;
        if (decimals >= 0) decimals++;
      } else return NaN;
    }
    if (digits === 0 || digits > 15 || decimals === 0) return NaN;
    const magnitude = decimals > 0 ? whole / POWERS_OF_TEN[decimals] : whole;
    if (magnitude > limit) return NaN;
    return negative ? -magnitude : magnitude;
  }

  /** `point` with the row's optional columns, as addOptionalFields reads them; null on any problem. */
  private withOptionalFields(text: string, point: TracePoint): TracePoint | null {
    const { col } = this;
    const speed = parseOptionalNumber(this.cell(text, col.speed), "speed");
    const heading = parseOptionalNumber(this.cell(text, col.heading), "heading");
    const vehicleClass = this.classes.of(this.cell(text, col.vehicleClass));
    const purpose = this.purposes.of(this.cell(text, col.purpose));
    const incomeBand = parseIncomeBand(this.cell(text, col.incomeBand));
    if (typeof speed === "string" || typeof heading === "string" || typeof incomeBand === "string")
      return null;
    if (typeof vehicleClass === "object" || typeof purpose === "object") return null;
    setOptionalFields(point, speed, heading, vehicleClass, purpose, incomeBand);
    return point;
  }

  /** Cell i's text; undefined when the layout has no such column, "" when the row is shorter (both: absent). */
  private cell(text: string, i: number | undefined): string | undefined {
    if (i === undefined || i >= this.cells) return undefined;
    return this.starts[i] === this.ends[i] ? "" : text.slice(this.starts[i], this.ends[i]);
  }
}

/** Printable ASCII other than space: what String.trim() keeps at a cell's ends. */
const isPlainChar = (c: number) => c > 32 && c < 127;

/** A parser that remembers its last input and answer. */
class LastParsed<T> {
  private raw: string | undefined = undefined;
  private value: T | undefined = undefined;

  constructor(private readonly parse: (raw: string | undefined) => T) {}

  of(raw: string | undefined): T {
    if (raw !== this.raw || this.value === undefined) {
      this.value = this.parse(raw);
      this.raw = raw;
    }
    return this.value;
  }
}
