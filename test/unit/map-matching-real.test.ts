import { test } from "node:test";
import assert from "node:assert/strict";
import { matchTrip } from "../../src/engine/matching/index.js";
import { Network } from "../../src/engine/network/network.js";
import type { RawTrip } from "../../src/engine/trips/types.js";
import { sharedDataFile } from "../helpers/shared-data.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { readTracePoints } from "../helpers/trace-points.js";

// GraphHopper's tiny trace + network pairs (MapMatching2Test), read by the product's OSM importer and GPX reader.
async function samplePair(osm: string, gpx: string): Promise<{ network: Network; trip: RawTrip } | null> {
  const osmFile = sharedDataFile(`graphhopper-mapmatching-samples/${osm}`);
  const gpxFile = sharedDataFile(`graphhopper-mapmatching-samples/${gpx}`);
  if (!osmFile || !gpxFile) return null;
  const network = new Network("sample", await readOsmSegments(osmFile));
  return {
    network,
    trip: { deviceId: gpx, vehicleClass: "personal", source: "lbs", points: await readTracePoints(gpxFile) },
  };
}

function streetsOf(network: Network, trip: ReturnType<typeof matchTrip>[number]): (string | null)[] {
  const names = trip.path.map((s) => network.segmentById(s.segmentId)!.name);
  return names.filter((n, i) => i === 0 || n !== names[i - 1]);
}

test("issue-70 (Novi Sad, 60 s fixes) follows the streets GraphHopper expects", async (t) => {
  const pair = await samplePair("issue-70.osm.gz", "issue-70.gpx");
  if (!pair) return t.skip("shared data absent");
  const matched = matchTrip(pair.network, pair.trip);
  assert.equal(matched.length, 1);
  assert.deepEqual(streetsOf(pair.network, matched[0]), [
    "Милана Видака",
    "Бранка Радичевића",
    "Здравка Челара",
  ]);
  assert.equal(matched[0].startT, pair.trip.points[0].t);
  assert.equal(matched[0].endT, pair.trip.points[pair.trip.points.length - 1].t);
});

test("issue-13 (Istanbul, no usable timestamps) is matched whole with about the trace's length", async (t) => {
  const pair = await samplePair("map-issue13.osm.gz", "issue-13.gpx");
  if (!pair) return t.skip("shared data absent");
  const matched = matchTrip(pair.network, pair.trip);
  assert.equal(matched.length, 1);
  const { points } = pair.trip;
  let gpxM = 0;
  for (let i = 1; i < points.length; i++) {
    gpxM += pair.network.ruler.distance(
      [points[i - 1].lon, points[i - 1].lat],
      [points[i].lon, points[i].lat],
    );
  }
  assert.ok(Math.abs(matched[0].lengthM - gpxM) < 10, `matched ${matched[0].lengthM} m, trace ${gpxM} m`);
});
