/**
 * Real trace + network pairs (GraphHopper map-matching samples): `npm run bench -- matching-real`.
 * Reports matched length against the GPX length and writes trace and match as GeoJSON to
 * docs/matching-samples/ for inspection. Networks are read by the product's OSM importer
 * (`readOsmSegments`), tracks by its trace reader. Where GraphHopper's MapMatching2Test has a
 * reference, the agreement is reported: issue-70's expected street sequence, and for issue-13
 * the match length against the GPX length (GraphHopper asserts they agree within a few metres).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { matchedLine, matchTrip } from "../src/engine/matching/index.js";
import { Network } from "../src/engine/network/network.js";
import { readOsmSegments } from "../src/engine/network/osm-import.js";
import type { GpsPoint, MatchedTrip } from "../src/engine/trips/types.js";
import { sharedDataFile } from "../test/helpers/shared-data.js";
import { readTracePoints } from "../test/helpers/trace-points.js";

interface Sample {
  name: string;
  osm: string;
  gpx: string;
  /** GraphHopper's expected street sequence (consecutive repeats collapsed), when it has one. */
  expectedStreets?: string[];
}

const SAMPLES: Sample[] = [
  {
    name: "issue-70",
    osm: "issue-70.osm.gz",
    gpx: "issue-70.gpx",
    expectedStreets: ["Милана Видака", "Бранка Радичевића", "Здравка Челара"],
  },
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
    const network = new Network(sample.name, await readOsmSegments(osmFile));
    const points = await readTracePoints(gpxFile);
    const started = performance.now();
    const matched = matchTrip(network, {
      deviceId: sample.name,
      vehicleClass: "personal",
      source: "lbs",
      points,
    });
    const matchMs = performance.now() - started;
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
      lengthDiffM: Math.round(matchedLengthM - gpxLengthM),
      matchMs: Number(matchMs.toFixed(1)),
      ...streetAgreement(network, sample, matched),
    });
  }
  return { samples: results };
}

/** Matched street sequence against GraphHopper's expected one, when the sample has one. */
function streetAgreement(network: Network, sample: Sample, matched: MatchedTrip[]) {
  if (!sample.expectedStreets) return {};
  const names = matched.flatMap((m) => m.path.map((s) => network.segmentById(s.segmentId)?.name ?? ""));
  const streets = names.filter((n, i) => i === 0 || n !== names[i - 1]);
  return {
    streets,
    expectedStreets: sample.expectedStreets,
    streetsAgree: JSON.stringify(streets) === JSON.stringify(sample.expectedStreets),
  };
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
