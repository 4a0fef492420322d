import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  packOutcomes,
  packRawTrips,
  unpackOutcomes,
  unpackRawTrips,
} from "../../src/engine/ingest/trip-columns.js";
import type { MatchOutcome } from "../../src/engine/ingest/match-pool.js";
import { decodeChunk, encodeChunk } from "../../src/engine/trips/chunk-format.js";
import {
  concatColumns,
  selectTrips,
  TripColumnsBuilder,
  tripRange,
  tripsToColumns,
  type TripColumns,
} from "../../src/engine/trips/columns.js";
import type { MatchedTrip, RawTrip } from "../../src/engine/trips/types.js";
import { ColumnarPathTrip } from "../../src/engine/trips/path-columns.js";
import { SegmentCellAccumulator } from "../../src/engine/counts/segment-cells.js";
import { Network } from "../../src/engine/network/network.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import { LocalClock } from "../../src/engine/time.js";
import { gridNetwork } from "../helpers/counts.js";
import { randomTrips } from "../helpers/random-trips.js";

/** What crossing a thread does: a structured clone. */
const crossed = <T>(value: T): T => structuredClone(value);

describe("trips as columns across threads", () => {
  it("raw trips come back deep-equal, optional point and trip fields included", () => {
    const trips: RawTrip[] = [
      {
        deviceId: "a",
        vehicleClass: "personal",
        source: "lbs",
        points: [
          { lon: 7.41, lat: 43.73, t: 1_700_000_000_000 },
          { lon: -0.5, lat: 0, t: 1_700_000_030_500, speed: 12.5, heading: 270 },
          { lon: 7.4, lat: 43.7, t: 1_700_000_061_000, speed: 0 },
        ],
        purpose: "hbw",
        incomeBand: 0,
      },
      { deviceId: "b", vehicleClass: "bicycle", source: "telematics", points: [] },
      {
        deviceId: "c",
        vehicleClass: "heavy_commercial",
        source: "lbs",
        points: [{ lon: 1e-9, lat: -89.999, t: 0, heading: 0 }],
      },
    ];
    assert.deepStrictEqual(unpackRawTrips(crossed(packRawTrips(trips))), trips);
  });

  it("outcomes come back deep-equal: matched trips with their paths, errors, trips split in pieces", () => {
    const withoutAttributes = ({ purpose: _p, incomeBand: _i, ...trip }: MatchedTrip): MatchedTrip => trip;
    const outcomes: MatchOutcome[] = [
      { matched: [matched("a", 3)] },
      { error: "no candidates" },
      { matched: [] },
      { matched: [matched("b", 1), withoutAttributes(matched("b", 0))] },
    ];
    const expected = structuredClone(outcomes);
    const unpacked = unpackOutcomes(crossed(packOutcomes(outcomes)));
    const trips = unpacked.flatMap((outcome) => ("matched" in outcome ? outcome.matched : []));
    assert.equal(trips.length, 3);
    // The paths stay in the columns: every trip reads its steps there.
    for (const trip of trips) assert.ok(ColumnarPathTrip.stepsOf(trip));
    assert.deepStrictEqual(unpacked.map(plainOutcome), expected);
  });

  it("trips back from a worker tally and pack as their step objects do, read from the columns", () => {
    const network = new Network("li", gridNetwork());
    const trips = randomTrips(network, new Rng(11, "trip-columns"), 400);
    const back = unpackOutcomes(crossed(packOutcomes(trips.map((trip) => ({ matched: [trip] }))))).flatMap(
      (outcome) => ("matched" in outcome ? outcome.matched : []),
    );
    assert.ok(back.every((trip) => ColumnarPathTrip.stepsOf(trip)));
    const clock = new LocalClock("Europe/Vaduz");
    const [objects, columns] = [
      new SegmentCellAccumulator(network, clock),
      new SegmentCellAccumulator(network, clock),
    ];
    trips.forEach((trip) => objects.addTrip(trip));
    back.forEach((trip) => columns.addTrip(trip));
    const cells = objects.drain();
    assert.ok(cells.length > 1000, `${cells.length} cells`);
    assert.deepStrictEqual(columns.drain(), cells);
    assert.deepStrictEqual(tripsToColumns(back), tripsToColumns(trips));
  });
});

/** An outcome with its trips as plain objects, their paths made from the columns. */
function plainOutcome(outcome: MatchOutcome): MatchOutcome {
  if (!("matched" in outcome)) return outcome;
  return { matched: outcome.matched.map((trip) => ({ ...trip, path: trip.path })) };
}

/**
 * Every way the code makes a chunk's columns gives an object of one shape: the same fields in the same
 * order. Built field by field, V8 kept such objects as hash tables (docs/performance.md, stop 43), and
 * objects of several shapes make the loops that read them polymorphic.
 */
describe("trip columns have one shape", () => {
  it("from trips, a builder, a stored chunk, a selection, a concatenation and a range", () => {
    const trips = [matched("a", 3), matched("b", 2), matched("a", 0)];
    const built = new TripColumnsBuilder();
    for (const trip of trips) built.add(trip);
    const fromTrips = tripsToColumns(trips);
    const encoded = encodeChunk(fromTrips);
    const envelope = { format: 2, tripCount: 3, stepCount: 5, devices: fromTrips.devices };
    const made: TripColumns[] = [
      built.columns(),
      decodeChunk(encoded, envelope),
      selectTrips(fromTrips, (i) => i !== 1),
      concatColumns([fromTrips, fromTrips]),
      tripRange(fromTrips, 1, 3),
      crossed(fromTrips),
    ];
    for (const cols of made) assert.deepEqual(Object.keys(cols), Object.keys(fromTrips));
    assert.deepEqual(Object.keys(fromTrips).slice(0, 3), ["count", "devices", "startT"]);
  });

  it("with fast properties, not as hash tables (V8's own check, in a process that allows it)", () => {
    const module = (path: string) =>
      JSON.stringify(new URL(`../../src/engine/trips/${path}`, import.meta.url).href);
    const script = `
      const { TripColumnsBuilder, tripsToColumns, selectTrips, concatColumns } = await import(${module("columns.ts")});
      const { decodeChunk, encodeChunk } = await import(${module("chunk-format.ts")});
      const trip = (deviceId) => ({ deviceId, vehicleClass: "personal", source: "lbs", origin: [7.41, 43.73],
        destination: [7.42, 43.74], startT: 1.7e12, endT: 1.7e12 + 6e5, lengthM: 1234.5,
        path: [{ segmentId: 1, forward: true, enterT: 1.7e12, exitT: 1.7e12 + 1e3 }] });
      const built = new TripColumnsBuilder();
      built.add(trip("a"));
      const cols = tripsToColumns([trip("a"), trip("b")]);
      const envelope = { format: 2, tripCount: 2, stepCount: 2, devices: cols.devices };
      const fast = new Function("o", "return %HasFastProperties(o)");
      const made = [cols, built.columns(), decodeChunk(encodeChunk(cols), envelope),
        selectTrips(cols, () => true), concatColumns([cols, cols])];
      console.log(JSON.stringify(made.map(fast)));`;
    const out = execFileSync(
      process.execPath,
      ["--allow-natives-syntax", "--import", "tsx", "--input-type=module", "-e", script],
      { encoding: "utf8" },
    );
    assert.deepEqual(JSON.parse(out), [true, true, true, true, true]);
  });
});

function matched(deviceId: string, steps: number): MatchedTrip {
  return {
    deviceId,
    vehicleClass: "personal",
    source: "lbs",
    origin: [7.41, 43.73],
    destination: [7.42, 43.74],
    startT: 1_700_000_000_000,
    endT: 1_700_000_600_000,
    lengthM: 1234.5,
    path: Array.from({ length: steps }, (_, i) => ({
      segmentId: 1_234_567_890 * 10_000 + i,
      forward: i % 2 === 0,
      enterT: 1_700_000_000_000 + i * 1000.25,
      exitT: 1_700_000_000_000 + (i + 1) * 1000.25,
    })),
    purpose: "hbo",
    incomeBand: 3,
  };
}
