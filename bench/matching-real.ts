/**
 * Real trace + network pairs (GraphHopper map-matching samples): `npm run bench -- matching-real`.
 * Reports matched length against the GPX length and writes trace and match as GeoJSON to
 * docs/matching-samples/ for inspection. The OSM and GPX readers are test stand-ins for now.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { matchedLine, matchTrip } from "../src/engine/matching/index.js";
import { Network } from "../src/engine/network/network.js";
import type { GpsPoint, MatchedTrip } from "../src/engine/trips/types.js";
import { sharedDataFile } from "../test/helpers/shared-data.js";
import { readTinyGpx, readTinyOsm } from "../test/helpers/tiny-osm.js";

const SAMPLES = [
  { name: "issue-70", osm: "issue-70.osm.gz", gpx: "issue-70.gpx" },
  { name: "issue-13", osm: "map-issue13.osm.gz", gpx: "issue-13.gpx" },
];
const outDir = join(dirname(fileURLToPath(import.meta.url)), "../docs/matching-samples");

export default async function matchingRealBench(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown>[] = [];
  for (const sample of SAMPLES) {
    const osmFile = sharedDataFile(`graphhopper-mapmatching-samples/${sample.osm}`);
    const gpxFile = sharedDataFile(`graphhopper-mapmatching-samples/${sample.gpx}`);
    if (!osmFile || !gpxFile) {
      results.push({ sample: sample.name, skipped: "shared data absent" });
      continue;
    }
    const network = new Network(sample.name, readTinyOsm(osmFile));
    const points = readTinyGpx(gpxFile);
    const matched = matchTrip(network, {
      deviceId: sample.name,
      vehicleClass: "personal",
      source: "lbs",
      points,
    });
    const gpxLengthM = traceLengthM(network, points);
    const matchedLengthM = matched.reduce((s, m) => s + m.lengthM, 0);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(
      join(outDir, `${sample.name}.geojson`),
      JSON.stringify(geojsonOf(network, points, matched)) + "\n",
    );
    results.push({
      sample: sample.name,
      segments: network.size,
      points: points.length,
      pieces: matched.length,
      gpxLengthM: Math.round(gpxLengthM),
      matchedLengthM: Math.round(matchedLengthM),
      ratio: Number((matchedLengthM / gpxLengthM).toFixed(3)),
    });
  }
  return { samples: results };
}

function traceLengthM(network: Network, points: GpsPoint[]): number {
  let m = 0;
  for (let i = 1; i < points.length; i++) {
    m += network.ruler.distance([points[i - 1].lon, points[i - 1].lat], [points[i].lon, points[i].lat]);
  }
  return m;
}

function geojsonOf(network: Network, points: GpsPoint[], matched: MatchedTrip[]) {
  return {
    type: "FeatureCollection",
    features: [
      {
        type: "Feature",
        properties: { kind: "gps-trace", points: points.length },
        geometry: { type: "LineString", coordinates: points.map((p) => [p.lon, p.lat]) },
      },
      ...matched.map((m, i) => ({
        type: "Feature",
        properties: {
          kind: "matched",
          piece: i,
          lengthM: Math.round(m.lengthM),
          streets: [...new Set(m.path.map((s) => network.segmentById(s.segmentId)?.name ?? ""))],
          stroke: "#d00",
        },
        geometry: { type: "LineString", coordinates: matchedLine(network, m) },
      })),
    ],
  };
}
