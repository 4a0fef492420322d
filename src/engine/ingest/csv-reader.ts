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
 */
export async function* readCsvTrace(path: string): AsyncGenerator<TraceRecord[]> {
  const file = basename(path);
  const input = openInput(path);
  input.setEncoding("utf8");
  let columns: ColumnIndex | null = null;
  let lineNo = 0;
  let rest = "";
  const readLines = (text: string, batch: TraceRecord[]) => {
    const lines = text.split("\n");
    for (const raw of lines) {
      lineNo++;
      let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (lineNo === 1 && line.startsWith("\uFEFF")) line = line.slice(1); // byte order mark of spreadsheet exports
      if (line.trim() === "") continue;
      const cells = splitCsvLine(line);
      if (columns === null) {
        const header = headerColumns(cells);
        if (typeof header === "string") {
          batch.push({ problem: { file, line: lineNo, message: header } });
          return false;
        }
        columns = header ?? DEFAULT_COLUMNS;
        if (header) continue;
      }
      const point = pointOfRow(cells, columns);
      batch.push(typeof point === "string" ? { problem: { file, line: lineNo, message: point } } : { point });
    }
    return true;
  };
  for await (const chunk of input) {
    const text = rest + (chunk as string);
    const cut = text.lastIndexOf("\n");
    if (cut < 0) {
      rest = text;
      continue;
    }
    rest = text.slice(cut + 1);
    const batch: TraceRecord[] = [];
    const goOn = readLines(text.slice(0, cut), batch);
    yield batch;
    if (!goOn) {
      input.destroy();
      return;
    }
  }
  if (rest !== "") {
    const batch: TraceRecord[] = [];
    readLines(rest, batch);
    yield batch;
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
