import { basename } from "node:path";
import { createInterface } from "node:readline";
import { openInput } from "./open-input.js";
import {
  parseLatitude,
  parseLongitude,
  parseOptionalNumber,
  parseTimestamp,
  parseVehicleClass,
} from "./fields.js";
import type { TracePoint, TraceRecord } from "./types.js";

type Column = "device" | "time" | "lat" | "lon" | "speed" | "heading" | "vehicleClass";

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
};

/** Column order of a file without a header row. */
const DEFAULT_ORDER: Column[] = ["device", "time", "lat", "lon", "speed", "heading", "vehicleClass"];

type ColumnIndex = Partial<Record<Column, number>>;

/**
 * Streams the points of a CSV trace, line by line, so memory does not grow
 * with the file. The first row is a header when its latitude/longitude cells
 * are not numbers; otherwise columns follow `device_id,timestamp,lat,lon[,speed,heading,vehicle_class]`.
 */
export async function* readCsvTrace(path: string): AsyncGenerator<TraceRecord> {
  const file = basename(path);
  const lines = createInterface({ input: openInput(path), crlfDelay: Infinity });
  let columns: ColumnIndex | null = null;
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === "") continue;
    const cells = splitCsvLine(line);
    if (columns === null) {
      const header = headerColumns(cells);
      if (typeof header === "string") {
        yield { problem: { file, line: lineNo, message: header } };
        return;
      }
      columns = header ?? Object.fromEntries(DEFAULT_ORDER.map((c, i) => [c, i]));
      if (header) continue;
    }
    const point = pointOfRow(cells, columns);
    yield typeof point === "string" ? { problem: { file, line: lineNo, message: point } } : { point };
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
    return `header lacks column(s) ${missing.join(", ")}; expected device_id,timestamp,lat,lon[,speed,heading,vehicle_class]`;
  return index;
}

function pointOfRow(cells: string[], col: ColumnIndex): TracePoint | string {
  const cell = (c: Column) => (col[c] === undefined ? undefined : cells[col[c]!]);
  const deviceId = cell("device")?.trim();
  if (!deviceId) return "device id is missing";
  const lat = parseLatitude(cell("lat"));
  if (typeof lat === "string") return lat;
  const lon = parseLongitude(cell("lon"));
  if (typeof lon === "string") return lon;
  const t = parseTimestamp(cell("time") ?? "");
  if (typeof t === "string") return t;
  const speed = parseOptionalNumber(cell("speed"), "speed");
  if (typeof speed === "string") return speed;
  const heading = parseOptionalNumber(cell("heading"), "heading");
  if (typeof heading === "string") return heading;
  const vehicleClass = parseVehicleClass(cell("vehicleClass"));
  if (typeof vehicleClass === "object") return vehicleClass.problem;
  const point: TracePoint = { deviceId, lon, lat, t };
  if (speed !== undefined) point.speed = speed;
  if (heading !== undefined) point.heading = heading;
  if (vehicleClass !== undefined) point.vehicleClass = vehicleClass;
  return point;
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
