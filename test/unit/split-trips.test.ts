import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readTraceFile } from "../../src/engine/ingest/read-traces.js";
import { SHARED_DATA as SHARED } from "../helpers/shared-data.js";
import {
  distanceM,
  splitTrips,
  TripSplitter,
  type SplitOptions,
} from "../../src/engine/ingest/split-trips.js";
import type { TracePoint } from "../../src/engine/ingest/types.js";
import type { VehicleClass } from "../../src/engine/trips/types.js";

const LAT = 52;
const M_PER_DEG_LON = 111_320 * Math.cos((LAT * Math.PI) / 180);
const T0 = Date.UTC(2026, 0, 5, 8, 0, 0);
const OPTS: SplitOptions = { source: "telematics", defaultVehicleClass: "personal" };

/** A fix `xM` metres east of lon 13 at `s` seconds after T0. */
function fix(s: number, xM: number, deviceId = "d1", vehicleClass?: VehicleClass): TracePoint {
  const p: TracePoint = { deviceId, lon: 13 + xM / M_PER_DEG_LON, lat: LAT, t: T0 + s * 1000 };
  if (vehicleClass) p.vehicleClass = vehicleClass;
  return p;
}

/** `n` fixes every `everyS` seconds, `stepM` apart, starting at (s, xM). */
function drive(n: number, s: number, xM: number, everyS = 10, stepM = 150, deviceId = "d1"): TracePoint[] {
  return Array.from({ length: n }, (_, i) => fix(s + i * everyS, xM + i * stepM, deviceId));
}

const times = (pts: { t: number }[]) => pts.map((p) => (p.t - T0) / 1000);

describe("splitTrips", () => {
  it("keeps one continuous drive as one trip with its source and default class", () => {
    const { trips, counts } = splitTrips(drive(10, 0, 0), OPTS);
    assert.equal(trips.length, 1);
    assert.equal(trips[0].points.length, 10);
    assert.equal(trips[0].vehicleClass, "personal");
    assert.equal(trips[0].source, "telematics");
    assert.equal(trips[0].deviceId, "d1");
    assert.equal(counts.pointsRead, 10);
    assert.equal(counts.trips, 1);
  });

  it("starts a new trip after a gap of 10 minutes, not after 9", () => {
    const gap10 = splitTrips([...drive(5, 0, 0), ...drive(5, 40 + 600, 5000)], OPTS);
    assert.deepEqual(
      gap10.trips.map((t) => times(t.points)),
      [
        [0, 10, 20, 30, 40],
        [640, 650, 660, 670, 680],
      ],
    );
    const gap9 = splitTrips([...drive(5, 0, 0), ...drive(5, 40 + 540, 5000)], OPTS);
    assert.equal(gap9.trips.length, 1);
  });

  it("ends a trip at the stop point of a 5-minute dwell and starts the next at the dwell's last fix", () => {
    const arrive = drive(6, 0, 0); // last fix at 50 s, 750 m
    const stay = Array.from({ length: 8 }, (_, k) => fix(50 + 60 * (k + 1), 750 + (k % 2 ? 5 : -5)));
    const leave = drive(6, 50 + 8 * 60 + 10, 900);
    const { trips, counts } = splitTrips([...arrive, ...stay, ...leave], OPTS);
    assert.equal(trips.length, 2);
    assert.deepEqual(times(trips[0].points), [0, 10, 20, 30, 40, 50]);
    assert.deepEqual(times(trips[1].points), [530, 540, 550, 560, 570, 580, 590]);
    assert.equal(counts.droppedPoints.dwell, 7);
    assert.equal(counts.pointsRead, 20);
  });

  it("does not split at a stop shorter than 5 minutes", () => {
    const stay = Array.from({ length: 4 }, (_, k) => fix(50 + 60 * (k + 1), 750));
    const { trips } = splitTrips([...drive(6, 0, 0), ...stay, ...drive(6, 300, 900)], OPTS);
    assert.equal(trips.length, 1);
    assert.equal(trips[0].points.length, 16);
  });

  it("drops a fix implying an impossible speed and keeps the rest of the trip", () => {
    const pts = drive(6, 0, 0);
    pts.splice(3, 0, fix(25, 50_000));
    const { trips, counts } = splitTrips(pts, OPTS);
    assert.equal(counts.droppedPoints.jump, 1);
    assert.deepEqual(times(trips[0].points), [0, 10, 20, 30, 40, 50]);
  });

  it("applies the speed limit of the vehicle class (80 km/h: fine by car, a jump by bicycle)", () => {
    const at80 = (cls: VehicleClass) => [0, 1, 2, 3].map((i) => fix(i * 36, i * 800, "d1", cls)); // 800 m / 36 s
    assert.equal(splitTrips(at80("personal"), OPTS).counts.droppedPoints.jump, 0);
    const bike = splitTrips(at80("bicycle"), OPTS);
    assert.equal(bike.counts.droppedPoints.jump, 3);
    assert.equal(bike.counts.droppedTrips.tooFewPoints, 1);
  });

  it("drops fixes out of time order and duplicates; same time elsewhere is a jump", () => {
    const pts = drive(6, 0, 0);
    const { trips, counts } = splitTrips(
      [pts[0], pts[1], pts[1], pts[2], pts[0], fix(20, 2000), pts[3], pts[4], pts[5]],
      OPTS,
    );
    assert.equal(counts.droppedPoints.duplicate, 1);
    assert.equal(counts.droppedPoints.outOfOrder, 1);
    assert.equal(counts.droppedPoints.jump, 1);
    assert.deepEqual(times(trips[0].points), [0, 10, 20, 30, 40, 50]);
  });

  it("drops trips under 200 m and trips of a single fix", () => {
    const short = drive(5, 0, 0, 10, 40); // 160 m
    const lone = [fix(2000, 9000)];
    const { trips, counts } = splitTrips([...short, ...lone, ...drive(4, 4000, 0, 10, 100)], OPTS);
    assert.deepEqual(counts.droppedTrips, { tooFewPoints: 1, tooShort: 1, zeroDuration: 0 });
    assert.equal(trips.length, 1);
    assert.equal(counts.trips, 1);
  });

  it("emits a device's trip as soon as it closes, while other devices stay open", () => {
    const splitter = new TripSplitter(OPTS);
    for (const p of [...drive(4, 0, 0, 10, 150, "a"), ...drive(4, 0, 0, 10, 150, "b")])
      assert.deepEqual(splitter.push(p), []);
    const closed = splitter.push(fix(1000, 0, "a"));
    assert.deepEqual(
      closed.map((t) => [t.deviceId, t.points.length]),
      [["a", 4]],
    );
    assert.deepEqual(
      splitter.flush().map((t) => t.deviceId),
      ["b"],
    );
    assert.equal(splitter.counts.droppedTrips.tooFewPoints, 1);
  });

  it("judges fixes within one second as up to a second apart, and drops a trip without duration", () => {
    const sameSecond = [fix(0, 0), fix(0, 60), fix(0, 120), fix(0, 180), fix(0, 240), fix(0, 400)];
    const { trips, counts } = splitTrips(sameSecond, OPTS);
    assert.equal(counts.droppedPoints.jump, 1); // 160 m in "one second" exceeds 250 km/h + 20 m
    assert.equal(counts.droppedTrips.zeroDuration, 1);
    assert.equal(trips.length, 0);
    const later = splitTrips([...sameSecond.slice(0, 2), fix(10, 300)], OPTS);
    assert.deepEqual(times(later.trips[0].points), [0, 0, 10]);
  });

  it("closes and forgets devices that have gone quiet while the input moves on", () => {
    const splitter = new TripSplitter(OPTS);
    const emitted = [...drive(5, 0, 0, 10, 150, "a"), ...drive(20_000, 0, 0, 10, 150, "b")].flatMap((p) =>
      splitter.push(p),
    );
    assert.deepEqual(
      emitted.map((t) => [t.deviceId, t.points.length]),
      [["a", 5]],
    );
    assert.equal(splitter.openDevices, 1);
    assert.deepEqual(
      splitter.flush().map((t) => [t.deviceId, t.points.length]),
      [["b", 20_000]],
    );
  });

  it("keeps a device's long drive whole in a file sorted by device, whose earlier devices reach later times", () => {
    // Device "a" ends days after "b" starts: by time alone, "b" looks silent at every sweep of the input.
    const late = drive(5, 5 * 86_400, 0, 10, 150, "a");
    const { trips } = splitTrips([...late, ...drive(25_000, 0, 0, 1, 15, "b")], OPTS);
    assert.deepEqual(
      trips.map((t) => [t.deviceId, t.points.length]),
      [
        ["a", 5],
        ["b", 25_000],
      ],
    );
  });

  it("takes the vehicle class of the points and splits where it changes", () => {
    const pts = [0, 1, 2, 3].map((i) => fix(i * 10, i * 100, "d1", "bicycle"));
    pts.push(...[4, 5, 6, 7].map((i) => fix(i * 10, i * 100, "d1", "heavy_commercial")));
    const { trips } = splitTrips(pts, OPTS);
    assert.deepEqual(
      trips.map((t) => [t.vehicleClass, t.points.length]),
      [
        ["bicycle", 4],
        ["heavy_commercial", 4],
      ],
    );
  });

  it("carries trip purpose and income band and splits where either changes", () => {
    const withAttributes = (i: number, purpose?: "hbw" | "hbo", incomeBand?: number): TracePoint => {
      const p = fix(i * 10, i * 100);
      if (purpose) p.purpose = purpose;
      if (incomeBand !== undefined) p.incomeBand = incomeBand;
      return p;
    };
    const pts = [
      ...[0, 1, 2, 3].map((i) => withAttributes(i, "hbw", 3)),
      ...[4, 5, 6, 7].map((i) => withAttributes(i, "hbo", 3)),
      ...[8, 9, 10, 11].map((i) => withAttributes(i, "hbo", 0)),
      ...[12, 13, 14, 15].map((i) => withAttributes(i)),
    ];
    const { trips } = splitTrips(pts, OPTS);
    assert.deepEqual(
      trips.map((t) => [t.purpose, t.incomeBand, times(t.points)[0], t.points.length]),
      [
        ["hbw", 3, 0, 4],
        ["hbo", 3, 40, 4],
        ["hbo", 0, 80, 4],
        [undefined, undefined, 120, 4],
      ],
    );
    assert.ok(!("purpose" in trips[3]) && !("incomeBand" in trips[3]), "absent, not undefined");
  });
});

describe("distanceM", () => {
  it("measures 1 degree of latitude as about 111.2 km", () => {
    assert.equal(Math.round(distanceM({ lon: 0, lat: 0 }, { lon: 0, lat: 1 })), 111_195);
  });
});

describe("splitting the GraphHopper samples", { skip: !SHARED && "no ../shared/data" }, () => {
  const splitFile = async (name: string) => {
    const points: TracePoint[] = [];
    for await (const batch of readTraceFile(join(SHARED!, "graphhopper-mapmatching-samples", name)))
      for (const r of batch) if (r.point) points.push(r.point);
    return splitTrips(points, OPTS);
  };

  it("keeps test1.gpx (1 s timestamps, several fixes per second) as one trip of all 264 fixes", async () => {
    const { trips, counts } = await splitFile("test1.gpx");
    assert.deepEqual(
      trips.map((t) => [t.deviceId, t.points.length]),
      [["GraphHopper", 264]],
    );
    assert.equal(counts.droppedPoints.jump, 0);
  });

  it("drops issue-13.gpx: all 29 fixes carry the same timestamp", async () => {
    const { trips, counts } = await splitFile("issue-13.gpx");
    assert.equal(trips.length, 0);
    assert.equal(counts.pointsRead, 29);
    assert.equal(
      counts.droppedTrips.zeroDuration + counts.droppedTrips.tooShort + counts.droppedTrips.tooFewPoints,
      1,
    );
  });
});
