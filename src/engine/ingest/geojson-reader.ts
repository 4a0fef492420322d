import { basename } from "node:path";
import { readText, type OnBytes } from "./open-input.js";
import { addOptionalFields, parseLatitude, parseLongitude, parseTimestamp } from "./fields.js";
import type { TracePoint, TraceRecord } from "./types.js";
import { EngineError } from "../errors.js";

interface Feature {
  type?: string;
  geometry?: { type?: string; coordinates?: unknown } | null;
  properties?: Record<string, unknown> | null;
}

/**
 * Reads a GeoJSON trace: Point features carrying `device_id` and `timestamp`
 * (or `time`), or LineString/MultiPoint features with a `times` or
 * `coordTimes` array parallel to their coordinates. JSON has no streaming
 * parser here, so the file is parsed whole: large traces belong in CSV.
 * A problem's `line` is the feature's ordinal (from 1), not a text line.
 * Also reads Barefoot's sample format: a JSON array of `{point: "POINT(lon lat)", time, id}`.
 */
export async function* readGeoJsonTrace(path: string, onBytes?: OnBytes): AsyncGenerator<TraceRecord[]> {
  const file = basename(path);
  let features: Feature[];
  try {
    features = featuresOf(JSON.parse(await readAll(path, onBytes)));
  } catch (e) {
    yield [{ problem: { file, line: 1, message: e instanceof Error ? e.message : String(e) } }];
    return;
  }
  for (let i = 0; i < features.length; i++) {
    const nr = i + 1;
    yield recordsOfFeature(features[i], `${file}#${nr}`).map((r): TraceRecord =>
      typeof r === "string" ? { problem: { file, line: nr, message: `feature ${nr}: ${r}` } } : { point: r },
    );
  }
}

async function readAll(path: string, onBytes?: OnBytes): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of readText(path, onBytes)) parts.push(chunk);
  return parts.join("");
}

function featuresOf(json: unknown): Feature[] {
  if (Array.isArray(json)) return json.map(featureOfWktSample);
  const obj = json as { type?: string; features?: unknown };
  if (obj?.type === "FeatureCollection" && Array.isArray(obj.features)) return obj.features as Feature[];
  if (obj?.type === "Feature") return [obj as Feature];
  throw new EngineError("invalid_trace_file", "not a GeoJSON FeatureCollection or Feature");
}

function recordsOfFeature(f: Feature, fallbackDevice: string): (TracePoint | string)[] {
  const props = f.properties ?? {};
  const type = f.geometry?.type;
  const coords = f.geometry?.coordinates;
  const deviceId = String(props.device_id ?? props.deviceId ?? props.name ?? props.id ?? fallbackDevice);
  if (type === "Point") return [pointOf(coords, props.timestamp ?? props.time, props, deviceId)];
  if ((type === "LineString" || type === "MultiPoint") && Array.isArray(coords)) {
    const times = props.times ?? props.coordTimes;
    if (!Array.isArray(times) || times.length !== coords.length)
      return [`${type} needs a "times" or "coordTimes" array as long as its coordinates`];
    return coords.map((c, j) => {
      const p = pointOf(c, times[j], props, deviceId);
      return typeof p === "string" ? `point ${j + 1}: ${p}` : p;
    });
  }
  return [`geometry ${type ?? "null"} is not a Point, LineString or MultiPoint`];
}

function pointOf(
  coords: unknown,
  time: unknown,
  props: Record<string, unknown>,
  deviceId: string,
): TracePoint | string {
  if (!Array.isArray(coords) || coords.length < 2) return "coordinates are not a [lon, lat] position";
  const lon = parseLongitude(coords[0] as number);
  if (typeof lon === "string") return lon;
  const lat = parseLatitude(coords[1] as number);
  if (typeof lat === "string") return lat;
  const t = parseTimestamp(time === undefined || time === null ? "" : String(time));
  if (typeof t === "string") return t;
  const point: TracePoint = { deviceId, lon, lat, t };
  const problem = addOptionalFields(point, {
    speed: stringOf(props.speed),
    heading: stringOf(props.heading),
    vehicleClass: stringOf(props.vehicle_class),
    purpose: stringOf(props.trip_purpose ?? props.purpose),
    incomeBand: stringOf(props.income_band ?? props.incomeBand),
  });
  return problem ?? point;
}

/** A Barefoot sample `{point: "POINT(lon lat)", time, id}` as a Point feature (bad ones keep no geometry). */
function featureOfWktSample(sample: { point?: unknown; time?: unknown; id?: unknown }): Feature {
  const m = /^POINT\s*\(\s*(\S+)\s+(\S+)\s*\)$/i.exec(String(sample?.point ?? "").trim());
  return {
    type: "Feature",
    geometry: m ? { type: "Point", coordinates: [Number(m[1]), Number(m[2])] } : null,
    properties: { device_id: sample?.id, time: sample?.time },
  };
}

const stringOf = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
