/**
 * Minimal OSM XML and GPX readers for the tiny GraphHopper sample pairs used
 * by the real-data matching test and benchmark. NOT the product importer:
 * replace `readTinyOsm` with `readOsmSegments` from
 * src/engine/network/osm-import.ts once it has landed (and the GPX reader
 * with the product's trace reader). Tag rules are deliberately crude: car
 * highways only, `oneway=yes|1|true|-1` and roundabouts, fixed speeds.
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import CheapRuler from "cheap-ruler";
import { SaxesParser } from "saxes";
import {
  ACCESS_BIKE,
  ACCESS_CAR,
  ACCESS_FOOT,
  segmentIdOf,
  type LonLat,
  type RoadClass,
  type Segment,
} from "../../src/engine/network/types.js";
import type { GpsPoint } from "../../src/engine/trips/types.js";

const CAR_SPEEDS: Record<string, number> = {
  motorway: 110,
  trunk: 90,
  primary: 70,
  secondary: 60,
  tertiary: 50,
  unclassified: 40,
  residential: 30,
  living_street: 10,
  service: 20,
  road: 30,
};

interface RawWay {
  id: number;
  nodes: number[];
  tags: Map<string, string>;
}

function readText(file: string): string {
  const bytes = readFileSync(file);
  return (file.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
}

/** Road segments of an OSM XML file: car ways split at junctions (nodes shared by ways) into pieces. */
export function readTinyOsm(file: string): Segment[] {
  const nodes = new Map<number, LonLat>();
  const ways: RawWay[] = [];
  let way: RawWay | null = null;
  const parser = new SaxesParser();
  parser.on("opentag", (tag) => {
    const a = tag.attributes as Record<string, string>;
    if (tag.name === "node") nodes.set(Number(a.id), [Number(a.lon), Number(a.lat)]);
    else if (tag.name === "way") way = { id: Number(a.id), nodes: [], tags: new Map() };
    else if (tag.name === "nd" && way) way.nodes.push(Number(a.ref));
    else if (tag.name === "tag" && way) way.tags.set(a.k, a.v);
  });
  parser.on("closetag", (tag) => {
    if (tag.name === "way" && way) {
      const highway = way.tags.get("highway") ?? "";
      const base = highway.replace(/_link$/, "");
      if (base in CAR_SPEEDS) ways.push(way);
      way = null;
    }
  });
  parser.write(readText(file)).close();
  return splitWays(ways, nodes);
}

function splitWays(ways: RawWay[], nodes: Map<number, LonLat>): Segment[] {
  const uses = new Map<number, number>();
  for (const w of ways) w.nodes.forEach((n) => uses.set(n, (uses.get(n) ?? 0) + 1));
  const ruler = new CheapRuler(nodes.values().next().value![1], "meters");
  const segments: Segment[] = [];
  for (const w of ways) {
    const highway = w.tags.get("highway")!;
    const onewayTag = w.tags.get("oneway") ?? "";
    const reversed = onewayTag === "-1";
    const oneway =
      reversed || ["yes", "1", "true"].includes(onewayTag) || w.tags.get("junction") === "roundabout";
    const ids = reversed ? [...w.nodes].reverse() : w.nodes;
    let start = 0;
    let index = 0;
    for (let i = 1; i < ids.length; i++) {
      if (i < ids.length - 1 && (uses.get(ids[i]) ?? 0) < 2) continue;
      const coords = ids.slice(start, i + 1).map((n) => nodes.get(n)!);
      const isLink = highway.endsWith("_link");
      const roadClass = (isLink ? "ramp" : highway) as RoadClass;
      segments.push({
        id: segmentIdOf(w.id, index),
        wayId: w.id,
        index: index++,
        roadClass,
        highway,
        roadType: "Local",
        oneway,
        speedKph: CAR_SPEEDS[highway.replace(/_link$/, "")],
        name: w.tags.get("name") ?? null,
        lengthM: ruler.lineDistance(coords),
        fromNode: ids[start],
        toNode: ids[i],
        access: ACCESS_CAR | ACCESS_BIKE | ACCESS_FOOT,
        coords,
      });
      start = i;
    }
  }
  return segments;
}

/** Track points of a GPX file with their times. */
export function readTinyGpx(file: string): GpsPoint[] {
  const points: GpsPoint[] = [];
  let current: GpsPoint | null = null;
  let inTime = false;
  const parser = new SaxesParser();
  parser.on("opentag", (tag) => {
    const a = tag.attributes as Record<string, string>;
    if (tag.name === "trkpt") current = { lon: Number(a.lon), lat: Number(a.lat), t: 0 };
    inTime = tag.name === "time" && current !== null;
  });
  parser.on("text", (text) => {
    if (inTime && current) current.t = Date.parse(text.trim());
  });
  parser.on("closetag", (tag) => {
    if (tag.name === "trkpt" && current) {
      points.push(current);
      current = null;
    }
    inTime = false;
  });
  parser.write(readText(file)).close();
  return points;
}
