import { basename } from "node:path";
import { openInput } from "./open-input.js";
import { addOptionalFields, parseLatitude, parseLongitude, parseTimestamp } from "./fields.js";
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
export async function* readCsvTrace(path: string): AsyncGenerator<Iterable<TraceRecord>> {
  const input = openInput(path);
  input.setEncoding("utf8");
  const rows = new CsvRows(basename(path));
  let rest = "";
  for await (const chunk of input) {
    const text = rest + (chunk as string);
    const cut = text.lastIndexOf("\n");
    if (cut < 0) {
      rest = text;
      continue;
    }
    rest = text.slice(cut + 1);
    yield rows.of(text, cut);
    if (rows.stopped) {
      input.destroy();
      return;
    }
  }
  if (rest !== "") yield rows.of(rest, rest.length);
}

/** The rows of a CSV file, chunk by chunk: line numbers and the columns carry over from chunk to chunk. */
class CsvRows {
  private columns: ColumnIndex | null = null;
  private lineNo = 0;
  /** Set when the header row lacks a needed column: nothing after it is read. */
  stopped = false;

  constructor(private readonly file: string) {}

  /** The records of the lines of `text` before `end` (a line break, or the text's end). */
  *of(text: string, end: number): Generator<TraceRecord> {
    for (let start = 0; start <= end && !this.stopped;) {
      let lineEnd = text.indexOf("\n", start);
      if (lineEnd < 0 || lineEnd > end) lineEnd = end;
      const record = this.recordOf(text.slice(start, lineEnd));
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
      if (header) return null;
    }
    const point = pointOfRow(cells, this.columns);
    return typeof point === "string" ? { problem: { file, line: this.lineNo, message: point } } : { point };
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
