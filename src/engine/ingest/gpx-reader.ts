import { basename } from "node:path";
import { SaxesParser } from "saxes";
import { readText, type OnBytes } from "./open-input.js";
import { parseLatitude, parseLongitude, parseOptionalNumber, parseTimestamp } from "./fields.js";
import type { TracePoint, TraceRecord } from "./types.js";

/** The trkpt being read: its attributes and the text of its children. */
interface OpenPoint {
  line: number;
  lat: string | undefined;
  lon: string | undefined;
  children: Record<string, string>;
}

/**
 * Streams the track points of a GPX file with a SAX parser, a batch per chunk read. Each `trk` is one
 * device, named by its `<name>` or else `<file>#<n>` (n counting tracks from 1);
 * routes and waypoints are ignored. A point without `<time>` is a bad row.
 */
export async function* readGpxTrace(path: string, onBytes?: OnBytes): AsyncGenerator<TraceRecord[]> {
  const file = basename(path);
  const parser = new SaxesParser({ position: true });
  const out: TraceRecord[] = [];
  const state = {
    track: 0,
    trackName: "",
    inTrk: false,
    point: null as OpenPoint | null,
    text: "",
    depth: 0,
    trkDepth: 0,
  };

  parser.on("opentag", (tag) => {
    state.depth++;
    state.text = "";
    const attr = (n: string) => tag.attributes[n] as string | undefined;
    if (tag.name === "trk") {
      state.track++;
      state.trackName = "";
      state.inTrk = true;
      state.trkDepth = state.depth;
    } else if (tag.name === "trkpt" && state.inTrk)
      state.point = { line: parser.line, lat: attr("lat"), lon: attr("lon"), children: {} };
  });
  parser.on("text", (text) => {
    state.text += text;
  });
  parser.on("closetag", (tag) => {
    if (tag.name === "trk") state.inTrk = false;
    else if (tag.name === "name" && state.inTrk && !state.point && state.depth === state.trkDepth + 1)
      state.trackName = state.text.trim();
    else if (tag.name === "trkpt" && state.point) {
      const deviceId = state.trackName || `${file}#${state.track}`;
      const point = pointOf(state.point, deviceId);
      const line = state.point.line;
      out.push(typeof point === "string" ? { problem: { file, line, message: point } } : { point });
      state.point = null;
    } else if (state.point) state.point.children[tag.name] = state.text.trim();
    state.depth--;
    state.text = "";
  });

  // Stream errors (a corrupt .gz) propagate to the caller; XML errors end this file with one problem.
  for await (const chunk of readText(path, onBytes)) {
    const failure = feed(parser, chunk);
    yield out.splice(0);
    if (failure) {
      yield [{ problem: { file, line: parser.line, message: failure } }];
      return;
    }
  }
  const failure = feed(parser, null);
  yield out.splice(0);
  if (failure) yield [{ problem: { file, line: parser.line, message: failure } }];
}

/** Writes a chunk (null: end of input) to the parser; the message when the XML is malformed. */
function feed(parser: SaxesParser, chunk: string | null): string | null {
  try {
    if (chunk === null) parser.close();
    else parser.write(chunk);
    return null;
  } catch (e) {
    const message = e instanceof Error ? e.message.split("\n")[0] : String(e);
    return `unreadable XML, rest of file skipped: ${message}`;
  }
}

function pointOf(p: OpenPoint, deviceId: string): TracePoint | string {
  const lat = parseLatitude(p.lat);
  if (typeof lat === "string") return lat;
  const lon = parseLongitude(p.lon);
  if (typeof lon === "string") return lon;
  const t = parseTimestamp(p.children.time ?? "");
  if (typeof t === "string") return t;
  const speed = parseOptionalNumber(p.children.speed, "speed");
  if (typeof speed === "string") return speed;
  const heading = parseOptionalNumber(p.children.course, "course");
  if (typeof heading === "string") return heading;
  const point: TracePoint = { deviceId, lon, lat, t };
  if (speed !== undefined) point.speed = speed;
  if (heading !== undefined) point.heading = heading;
  return point;
}
