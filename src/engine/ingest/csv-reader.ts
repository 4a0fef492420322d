import { basename } from "node:path";
import { readText, type OnBytes } from "./open-input.js";
import type { GpsPoint, TripPurpose, VehicleClass } from "../trips/types.js";
import {
  addOptionalFields,
  MAX_INCOME_BAND,
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
import {
  fixOf,
  handRecord,
  type TraceBatch,
  type TracePoint,
  type TraceRecord,
  type TraceRowSink,
} from "./types.js";

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
 * ~55 MB an ingest of the ingest bench's file copied into the old one. Handed to a sink (`eachRow`), a
 * plain row makes no object but the fix the trip keeps.
 */
export async function* readCsvTrace(path: string, onBytes?: OnBytes): AsyncGenerator<TraceBatch> {
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

  /** The lines of `text` from `from` to `end` (a line break, or the text's end), read when iterated or handed on. */
  of(text: string, end: number, from = 0): TraceBatch {
    return new CsvBatch(this, text, end, from);
  }

  /** The records of the lines, a row read per step. */
  *records(text: string, end: number, from: number): Generator<TraceRecord> {
    const lines = new CsvLines(text, end, from);
    for (let start = from; start <= end && !this.stopped; start = lines.end + 1) {
      const plain = this.plainRowAt(lines, start);
      const record = plain ? { point: plain.point() } : this.recordOf(text.slice(start, lines.end));
      if (record) yield record;
    }
  }

  /** The lines handed to `sink`, a plain row as its fix and fields, without a record or point object. */
  eachRow(text: string, end: number, from: number, sink: TraceRowSink): void {
    const lines = new CsvLines(text, end, from);
    for (let start = from; start <= end && !this.stopped && !sink.stopped; start = lines.end + 1) {
      const plain = this.plainRowAt(lines, start);
      if (plain) sink.point(plain.deviceId, plain.fix(), plain.vehicleClass, plain.purpose, plain.incomeBand);
      else {
        const record = this.recordOf(text.slice(start, lines.end));
        if (record) handRecord(sink, record);
      }
    }
  }

  /**
   * The line at `start` read in place (PlainRows, holding its fields until the next row), or null when it
   * needs the full reader (a header, quotes, padding, anything unusual); `lines.end` is then where it ends.
   */
  private plainRowAt(lines: CsvLines, start: number): PlainRows | null {
    const lineEnd = lines.lineAt(start);
    if (!this.plainRows || lines.quoted(start, lineEnd) || !this.plainRows.read(lines.text, start, lineEnd))
      return null;
    this.lineNo++;
    return this.plainRows;
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

/** One piece of a CSV's text as a batch of records. */
class CsvBatch implements TraceBatch {
  constructor(
    private readonly rows: CsvRows,
    private readonly text: string,
    private readonly end: number,
    private readonly from: number,
  ) {}

  [Symbol.iterator](): Iterator<TraceRecord> {
    return this.rows.records(this.text, this.end, this.from);
  }

  eachRow(sink: TraceRowSink): void {
    this.rows.eachRow(this.text, this.end, this.from, sink);
  }
}

/** The line breaks of a piece of text up to `limit`, and whether a line holds a quote (found once per quote). */
class CsvLines {
  /** Where the line last asked for ends. */
  end = 0;
  private quote: number;

  constructor(
    readonly text: string,
    private readonly limit: number,
    from: number,
  ) {
    this.quote = text.indexOf('"', from);
  }

  lineAt(start: number): number {
    const lineEnd = this.text.indexOf("\n", start);
    this.end = lineEnd < 0 || lineEnd > this.limit ? this.limit : lineEnd;
    return this.end;
  }

  quoted(start: number, lineEnd: number): boolean {
    if (this.quote >= 0 && this.quote < start) this.quote = this.text.indexOf('"', start);
    return this.quote >= 0 && this.quote <= lineEnd;
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

  /** The row's fields, set by `read` (valid until the next row). */
  deviceId = "";
  lon = 0;
  lat = 0;
  t = 0;
  speed: number | undefined = undefined;
  heading: number | undefined = undefined;
  vehicleClass: VehicleClass | undefined = undefined;
  purpose: TripPurpose | undefined = undefined;
  incomeBand: number | undefined = undefined;

  /** Reads the row in text[start, end) into the fields; false when it is not a plain row (pointOfRow reads it). */
  read(text: string, start: number, end: number): boolean {
    if (end > start && text.charCodeAt(end - 1) === 13) end--; // \r\n line ends
    if (!this.cut(text, start, end)) return false;
    const { col } = this;
    const deviceId = this.plainDeviceId(text, col.device);
    const lat = this.decimal(text, col.lat, 90);
    const lon = this.decimal(text, col.lon, 180);
    if (deviceId === null || Number.isNaN(lat) || Number.isNaN(lon) || col.time === undefined) return false;
    if (col.time >= this.cells) return false;
    const t = parseTimestampAt(text, this.starts[col.time], this.ends[col.time]);
    if (typeof t === "string") return false;
    this.deviceId = deviceId;
    this.lon = lon;
    this.lat = lat;
    this.t = t;
    return this.cells > 4 ? this.readOptionalFields(text) : this.withoutOptionalFields();
  }

  /** The row as a point (the records' form). */
  point(): TracePoint {
    const point: TracePoint = { deviceId: this.deviceId, lon: this.lon, lat: this.lat, t: this.t };
    setOptionalFields(point, this.speed, this.heading, this.vehicleClass, this.purpose, this.incomeBand);
    return point;
  }

  /** The row's fix, as the splitter keeps it. */
  fix(): GpsPoint {
    return fixOf(this);
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
  private plainDeviceId(text: string, i: number | undefined): string | null {
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

  private withoutOptionalFields(): boolean {
    this.speed = this.heading = this.incomeBand = undefined;
    this.vehicleClass = this.purpose = undefined;
    return true;
  }

  /**
   * The row's optional columns, as addOptionalFields reads them, plain numbers and repeated words read in
   * place (not a string per cell: three per row of the simulator's traces); false on anything else, which
   * pointOfRow then reads (or names as the row's problem).
   */
  private readOptionalFields(text: string): boolean {
    const { col } = this;
    const speed = this.optionalNumber(text, col.speed, "speed");
    const heading = this.optionalNumber(text, col.heading, "heading");
    const vehicleClass = this.classes.at(text, this.bounds(col.vehicleClass));
    const purpose = this.purposes.at(text, this.bounds(col.purpose));
    const incomeBand = this.optionalBand(text, col.incomeBand);
    if (typeof speed === "string" || typeof heading === "string" || typeof incomeBand === "string")
      return false;
    if (typeof vehicleClass === "object" || typeof purpose === "object") return false;
    this.speed = speed;
    this.heading = heading;
    this.vehicleClass = vehicleClass;
    this.purpose = purpose;
    this.incomeBand = incomeBand;
    return true;
  }

  /** parseOptionalNumber of cell i: a plain decimal read in place, anything else from its text. */
  private optionalNumber(text: string, i: number | undefined, name: string): number | undefined | string {
    if (i === undefined || i >= this.cells || this.starts[i] === this.ends[i]) return undefined;
    const plain = this.decimal(text, i, Infinity);
    return Number.isNaN(plain) ? parseOptionalNumber(this.cell(text, i), name) : plain;
  }

  /** parseIncomeBand of cell i: up to three digits read in place, anything else from its text. */
  private optionalBand(text: string, i: number | undefined): number | undefined | string {
    if (i === undefined || i >= this.cells || this.starts[i] === this.ends[i]) return undefined;
    const [s, e] = [this.starts[i], this.ends[i]];
    if (e - s > 3) return parseIncomeBand(this.cell(text, i));
    let band = 0;
    for (let at = s; at < e; at++) {
      const digit = text.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) return parseIncomeBand(this.cell(text, i));
      band = band * 10 + digit;
    }
    return band <= MAX_INCOME_BAND ? band : parseIncomeBand(this.cell(text, i));
  }

  /** Cell i's bounds in the row: [start, end), or null when the layout has no such column or the row is shorter. */
  private bounds(i: number | undefined): CellBounds | null {
    if (i === undefined || i >= this.cells) return null;
    this.cellBounds.start = this.starts[i];
    this.cellBounds.end = this.ends[i];
    return this.cellBounds;
  }

  private readonly cellBounds: CellBounds = { start: 0, end: 0 };

  /** Cell i's text; undefined when the layout has no such column, "" when the row is shorter (both: absent). */
  private cell(text: string, i: number | undefined): string | undefined {
    if (i === undefined || i >= this.cells) return undefined;
    return this.starts[i] === this.ends[i] ? "" : text.slice(this.starts[i], this.ends[i]);
  }
}

interface CellBounds {
  start: number;
  end: number;
}

/** Printable ASCII other than space: what String.trim() keeps at a cell's ends. */
const isPlainChar = (c: number) => c > 32 && c < 127;

/** A parser of a cell that remembers its last text and answer: a trace repeats a class or purpose row after row. */
class LastParsed<T> {
  private raw: string | undefined = undefined;
  private value: T | undefined = undefined;

  constructor(private readonly parse: (raw: string | undefined) => T) {}

  /** The parse of the cell at `bounds` in `text` (null: absent); the text is cut only when it changed. */
  at(text: string, bounds: CellBounds | null): T {
    const raw = this.raw;
    const same =
      bounds === null
        ? raw === undefined
        : raw !== undefined && bounds.end - bounds.start === raw.length && text.startsWith(raw, bounds.start);
    if (!same || this.value === undefined) {
      this.raw = bounds === null ? undefined : text.slice(bounds.start, bounds.end);
      this.value = this.parse(this.raw);
    }
    return this.value;
  }
}
