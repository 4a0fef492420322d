import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LonLat } from "../../src/engine/network/types.js";
import { accessModeOf, TRIP_PURPOSES, type VehicleClass } from "../../src/engine/trips/types.js";
import {
  congestion,
  simulate,
  Simulation,
  type SimulatedTrip,
  type SimulateOptions,
} from "../../src/engine/simulate/index.js";
import { deviceCounts } from "../../src/engine/simulate/population.js";
import { Rng } from "../../src/engine/simulate/rng.js";
import {
  isoUtc,
  parseGroundTruthLine,
  TRACE_CSV_HEADER,
  writeSimulation,
} from "../../src/engine/simulate/writers.js";
import { gridNetwork } from "../helpers/grid-network.js";

const network = gridNetwork({ size: 10 });
const JANUARY: SimulateOptions = {
  from: "2025-01",
  to: "2025-01",
  tripsPerDay: 50,
  seed: 7,
  source: "mixed",
};
const trips = [...simulate(network, JANUARY)];
const HOUR = 3_600_000;
const MINUTE = 60_000;

const segmentOf = (id: number) => network.segmentById(id)!;
const startNode = (s: { segmentId: number; forward: boolean }) =>
  s.forward ? segmentOf(s.segmentId).fromNode : segmentOf(s.segmentId).toNode;
const endNode = (s: { segmentId: number; forward: boolean }) =>
  s.forward ? segmentOf(s.segmentId).toNode : segmentOf(s.segmentId).fromNode;
const isWeekend = (t: number) => [0, 6].includes(new Date(t).getUTCDay());

test("the seeded generator is deterministic and the seed matters", () => {
  const short = { ...JANUARY, tripsPerDay: 20 };
  const a = JSON.stringify([...simulate(network, short)]);
  const b = JSON.stringify([...simulate(network, short)]);
  const c = JSON.stringify([...simulate(network, { ...short, seed: 8 })]);
  assert.equal(a, b);
  assert.notEqual(a, c);
  const sim = new Simulation(network, short);
  assert.equal(JSON.stringify([...sim.trips()]), a);
  assert.equal(JSON.stringify([...sim.trips()]), a, "a second pass repeats the first");
});

test("the rng gives the same stream per seed and salt and is uniform enough", () => {
  const draws = (seed: number, salt: string) => {
    const rng = new Rng(seed, salt);
    return Array.from({ length: 5 }, () => rng.next());
  };
  assert.deepEqual(draws(1, "x"), draws(1, "x"));
  assert.notDeepEqual(draws(1, "x"), draws(1, "y"));
  const rng = new Rng(3);
  const n = 20_000;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += rng.next();
  assert.ok(Math.abs(sum / n - 0.5) < 0.01);
});

test("a month at 50 trips/day has about 50 trips per day and weekends are quieter", () => {
  assert.ok(Math.abs(trips.length / 31 - 50) < 50 * 0.15, `${trips.length} trips`);
  const perDay = new Map<string, number>();
  for (const t of trips) {
    const day = new Date(t.truth.startT).toISOString().slice(0, 10);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
  }
  const mean = (weekend: boolean) => {
    const days = [...perDay].filter(([d]) => isWeekend(Date.parse(d)) === weekend).map(([, n]) => n);
    return days.reduce((a, b) => a + b, 0) / days.length;
  };
  assert.ok(mean(true) < mean(false) * 0.9, `weekend ${mean(true)} vs weekday ${mean(false)}`);
});

test("every route is connected, respects oneways and the vehicle's access mode", () => {
  for (const { truth } of trips) {
    assert.ok(truth.route.length >= 1);
    truth.route.forEach((step, k) => {
      const seg = segmentOf(step.segmentId);
      assert.ok(step.forward || !seg.oneway, `${truth.tripId} against oneway ${seg.id}`);
      assert.ok(network.allows(seg, accessModeOf(truth.vehicleClass)), `${truth.tripId} on ${seg.roadClass}`);
      if (k > 0)
        assert.equal(startNode(step), endNode(truth.route[k - 1]), `${truth.tripId} gap at step ${k}`);
    });
  }
  assert.ok(trips.some((t) => t.truth.route.length > 3));
});

test("route length and duration agree with the segments and the vehicle's speed", () => {
  for (const { truth } of trips) {
    const segs = truth.route.map((s) => segmentOf(s.segmentId));
    const inner = segs.slice(1, -1).reduce((sum, s) => sum + s.lengthM, 0);
    const all = segs.reduce((sum, s) => sum + s.lengthM, 0);
    assert.ok(
      truth.lengthM >= 300 && truth.lengthM >= inner - 0.1 && truth.lengthM <= all + 0.1,
      truth.tripId,
    );
    const kph = truth.lengthM / 1000 / ((truth.endT - truth.startT) / HOUR);
    const speeds = segs.map((s) => s.speedKph);
    if (truth.vehicleClass === "bicycle") assert.ok(kph > 9 && kph < 28, `bike at ${kph}`);
    else if (truth.vehicleClass === "pedestrian") assert.ok(kph > 3 && kph < 6.6, `walk at ${kph}`);
    else
      assert.ok(
        kph <= Math.max(...speeds) && kph >= Math.min(...speeds) / 3,
        `${truth.vehicleClass} at ${kph}`,
      );
  }
});

test("points run from departure to arrival in time order and stay within a few σ of the route", () => {
  for (const trip of trips) {
    const { truth, points } = trip;
    assert.ok(points.length >= 2);
    assert.equal(points[0].t, truth.startT);
    assert.equal(points.at(-1)!.t, truth.endT);
    for (let k = 1; k < points.length; k++) {
      assert.ok(points[k].t > points[k - 1].t, truth.tripId);
      assert.ok(points[k].t - points[k - 1].t <= 5 * MINUTE, `${truth.tripId}: gap splits the trip`);
    }
    const sigma = trip.source === "lbs" ? 10 : 5;
    const lines = truth.route.map((s) => segmentOf(s.segmentId).coords);
    for (const p of points) {
      const at: LonLat = [p.lon, p.lat];
      const d = Math.min(
        ...lines.map((l) => network.ruler.distance(at, network.ruler.pointOnLine(l, at).point)),
      );
      assert.ok(d < 5 * sigma, `${truth.tripId}: ${d.toFixed(1)} m off the route`);
    }
    assert.ok(network.ruler.distance([points[0].lon, points[0].lat], truth.origin) < 5 * sigma);
    assert.ok(
      network.ruler.distance([points.at(-1)!.lon, points.at(-1)!.lat], truth.destination) < 5 * sigma,
    );
  }
});

test("telematics fixes come at a fixed interval with speed and heading; phone fixes are sparse and irregular", () => {
  const gaps = (source: string) =>
    trips
      .filter((t) => t.source === source)
      .flatMap((t) => t.points.slice(1, -1).map((p, k) => (p.t - t.points[k].t) / 1000));
  const telematics = trips.filter((t) => t.source === "telematics");
  assert.ok(telematics.length > 0);
  assert.ok(telematics.every((t) => t.points.every((p) => p.speed !== undefined && p.heading !== undefined)));
  assert.ok(gaps("telematics").every((g) => [5, 10, 15].includes(g)));
  const lbs = gaps("lbs");
  const mean = lbs.reduce((a, b) => a + b, 0) / lbs.length;
  assert.ok(mean > 25 && mean < 45, `lbs mean gap ${mean}`);
  assert.ok(new Set(lbs.map(Math.round)).size > 20, "lbs gaps are irregular");
  assert.ok(
    trips.filter((t) => t.source === "lbs").every((t) => t.points.every((p) => p.speed === undefined)),
  );
});

test("a device's consecutive trips are at least 10 minutes apart", () => {
  const byDevice = new Map<string, SimulatedTrip[]>();
  for (const t of trips) byDevice.set(t.deviceId, [...(byDevice.get(t.deviceId) ?? []), t]);
  assert.ok(byDevice.size > 10);
  for (const own of byDevice.values()) {
    for (let k = 1; k < own.length; k++) {
      assert.ok(own[k].truth.startT - own[k - 1].truth.endT >= 10 * MINUTE, own[k].truth.tripId);
    }
  }
});

test("weekday departures peak in the morning rush, not at night", () => {
  const weekday = trips.filter((t) => !isWeekend(t.truth.startT));
  const hourOf = (t: SimulatedTrip) => new Date(t.truth.startT).getUTCHours();
  const perHour = (from: number, to: number) =>
    weekday.filter((t) => hourOf(t) >= from && hourOf(t) < to).length / (to - from);
  assert.ok(perHour(7, 10) > 5 * perHour(1, 5), `AM ${perHour(7, 10)} vs night ${perHour(1, 5)}`);
});

test("each route step carries the true times it was entered and left, back to back from start to end", () => {
  for (const { truth } of trips) {
    assert.equal(truth.route[0].enterT, truth.startT, truth.tripId);
    assert.equal(truth.route[truth.route.length - 1].exitT, truth.endT, truth.tripId);
    truth.route.forEach((s, k) => {
      assert.ok(s.exitT >= s.enterT, `${truth.tripId} step ${k}`);
      if (k > 0) assert.equal(s.enterT, truth.route[k - 1].exitT, `${truth.tripId} step ${k}`);
    });
  }
});

test("congestion slows busy roads at the weekday peaks and leaves the night at free flow", () => {
  assert.ok(congestion("primary", 17.5, "weekday") > 1.6);
  assert.ok(congestion("residential", 17.5, "weekday") < 1.15);
  assert.ok(congestion("primary", 17.5, "weekend") < congestion("primary", 17.5, "weekday"));
  for (const hour of [0, 1, 2, 3, 4]) assert.ok(congestion("primary", hour, "weekday") < 1.01);
  // The true step speeds of cars on the arterials, relative to the posted speed: slower in the rush hours.
  const ratios = (hours: number[]) => {
    const out: number[] = [];
    for (const { truth } of trips.filter((t) => t.vehicleClass === "personal" && !isWeekend(t.truth.startT)))
      for (const s of truth.route.slice(1, -1)) {
        const seg = segmentOf(s.segmentId);
        if (seg.roadClass !== "primary" || !hours.includes(new Date(s.enterT).getUTCHours())) continue;
        out.push(seg.lengthM / ((s.exitT - s.enterT) / 1000) / (seg.speedKph / 3.6));
      }
    return out.reduce((a, b) => a + b, 0) / out.length;
  };
  const peak = ratios([7, 8, 16, 17, 18]);
  const night = ratios([20, 21, 22, 23, 0, 1, 2, 3, 4, 5]);
  assert.ok(peak < 0.75 * night, `peak ${peak.toFixed(2)} vs night ${night.toFixed(2)} of the posted speed`);
});

test("heavy trucks keep to major roads more than cars", () => {
  const majorShare = (cls: VehicleClass) => {
    let major = 0;
    let total = 0;
    for (const { truth } of trips.filter((t) => t.vehicleClass === cls)) {
      for (const s of truth.route) {
        const seg = segmentOf(s.segmentId);
        total += seg.lengthM;
        if (seg.roadClass === "primary" || seg.roadClass === "secondary") major += seg.lengthM;
      }
    }
    return major / total;
  };
  assert.ok(majorShare("heavy_commercial") > majorShare("personal") + 0.1);
});

test("trips carry purpose and income; homes commute to work on weekday mornings", () => {
  assert.ok(trips.every((t) => TRIP_PURPOSES.includes(t.truth.purpose)));
  for (const p of TRIP_PURPOSES)
    assert.ok(
      trips.some((t) => t.truth.purpose === p),
      p,
    );
  const personal = trips.filter((t) => t.vehicleClass === "personal");
  assert.ok(personal.every((t) => t.truth.incomeBand >= 1 && t.truth.incomeBand <= 5));
  assert.ok(new Set(personal.map((t) => t.truth.incomeBand)).size >= 4);
  const commercial = trips.filter((t) => t.vehicleClass.endsWith("_commercial"));
  assert.ok(
    commercial.length > 0 && commercial.every((t) => t.truth.incomeBand === 0 && t.truth.purpose === "nhbw"),
  );
  const commutes = trips.filter((t) => t.truth.purpose === "hbw" && !isWeekend(t.truth.startT));
  const morning = commutes.filter((t) => new Date(t.truth.startT).getUTCHours() < 12);
  assert.ok(morning.length > commutes.length * 0.35 && morning.length < commutes.length * 0.65);
  const hbo = trips.filter((t) => t.truth.purpose === "hbo").length;
  assert.ok(hbo > trips.length * 0.4 && hbo < trips.length * 0.8);
});

test("device counts follow trips per day and the vehicle mix", () => {
  const counts = deviceCounts({ tripsPerDay: 1000, seed: 1, source: "lbs" });
  assert.equal(counts.personal, 340); // 1000 × 0.85 / 2.5
  assert.equal(counts.heavy_commercial, 8); // 1000 × 0.03 / 4
  const sim = new Simulation(network, { ...JANUARY, devices: 10, vehicleMix: { bicycle: 0, pedestrian: 0 } });
  assert.ok(sim.devices.every((d) => d.vehicleClass !== "bicycle" && d.vehicleClass !== "pedestrian"));
  assert.ok(Math.abs(sim.devices.length - 10) <= 2);
});

test("presence: devices seen on a share of days, each seen day a whole day of trips, the same trips per day", () => {
  assert.equal(deviceCounts({ tripsPerDay: 1000, seed: 1, source: "lbs", presence: 0.1 }).personal, 3400);
  const panel = new Simulation(network, { ...JANUARY, presence: 0.1 });
  assert.ok(Math.abs(panel.devices.length / new Simulation(network, JANUARY).devices.length - 10) < 1);
  const seen = [...panel.trips()];
  // Trips per day stay near the asked 50 (31 days), whoever makes them.
  assert.ok(Math.abs(seen.length / 31 - 50) < 10, `${seen.length / 31} trips a day`);
  const daysSeen = new Map<string, Set<string>>();
  for (const t of seen) {
    const days = daysSeen.get(t.deviceId) ?? new Set<string>();
    daysSeen.set(t.deviceId, days.add(new Date(t.truth.startT).toISOString().slice(0, 10)));
  }
  // Each device is seen on about one day in ten: 3.1 of 31 on average.
  const meanDays = [...daysSeen.values()].reduce((sum, d) => sum + d.size, 0) / panel.devices.length;
  assert.ok(meanDays > 2 && meanDays < 4, `${meanDays} days seen`);
  // Presence 1 is the default: it draws nothing, so the trips are those of a simulation without the option.
  assert.deepEqual(
    [...simulate(network, { ...JANUARY, presence: 1 })].map((t) => t.truth.tripId),
    trips.map((t) => t.truth.tripId),
  );
  assert.throws(() => new Simulation(network, { ...JANUARY, presence: 0 }), /presence/);
  assert.throws(() => new Simulation(network, { ...JANUARY, presence: 1.5 }), /presence/);
});

test("invalid options are refused", () => {
  assert.throws(() => new Simulation(network, { ...JANUARY, from: "2025-13" }), /YYYY-MM/);
  assert.throws(() => new Simulation(network, { ...JANUARY, from: "2025-03", to: "2025-02" }), /after/);
  assert.throws(() => new Simulation(network, { ...JANUARY, tripsPerDay: 0 }), /positive/);
});

test("the writers produce monthly trace CSVs sorted by device and time, and ground truth that parses back", () => {
  const dir = mkdtempSync(join(tmpdir(), "sim-"));
  try {
    const opts = {
      ...JANUARY,
      tripsPerDay: 10,
      from: "2025-01",
      to: "2025-02",
      source: "telematics" as const,
    };
    const expected = [...simulate(network, opts)];
    const summary = writeSimulation(simulate(network, opts), dir);
    assert.deepEqual(
      summary.months.map((m) => m.month),
      ["2025-01", "2025-02"],
    );
    assert.equal(summary.trips, expected.length);
    assert.equal(
      summary.points,
      expected.reduce((n, t) => n + t.points.length, 0),
    );
    let rows = 0;
    for (const m of summary.months) {
      const lines = readFileSync(m.traces, "utf8").trimEnd().split("\n");
      assert.equal(lines[0], TRACE_CSV_HEADER);
      const body = lines.slice(1).map((l) => l.split(","));
      assert.equal(body.length, m.points);
      rows += body.length;
      for (let k = 1; k < body.length; k++) {
        const [prev, cur] = [body[k - 1], body[k]];
        assert.ok(prev[0] < cur[0] || (prev[0] === cur[0] && prev[1] < cur[1]), `row ${k} out of order`);
      }
      assert.ok(body.every((r) => r.length === 9 && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r[1])));
      assert.ok(body.every((r) => Number.isFinite(Number(r[2])) && Number(r[4]) >= 0));
      const truths = readFileSync(m.groundTruth, "utf8").trimEnd().split("\n").map(parseGroundTruthLine);
      // Rows carry their trip's class, purpose and income band.
      const attributes = new Set(
        truths.map((t) => [t.deviceId, t.vehicleClass, t.purpose, t.incomeBand].join()),
      );
      assert.ok(body.every((r) => attributes.has([r[0], r[6], r[7], r[8]].join())));
      assert.ok(new Set(body.map((r) => r[7])).size >= 2, "several purposes");
      assert.equal(truths.length, m.trips);
      assert.ok(truths.every((t) => t.startT >= Date.parse(`${m.month}-01T00:00:00Z`)));
    }
    assert.equal(rows, summary.points);
    const first = parseGroundTruthLine(readFileSync(summary.months[0].groundTruth, "utf8").split("\n")[0]);
    assert.deepEqual(first.route, expected[0].truth.route);
    assert.equal(first.tripId, expected[0].truth.tripId);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("timestamps are formatted exactly like Date.toISOString", () => {
  const rng = new Rng(5);
  for (let k = 0; k < 2000; k++) {
    const t = Math.floor(rng.range(0, 4e12));
    assert.equal(isoUtc(t), new Date(t).toISOString());
  }
  assert.equal(isoUtc(Date.UTC(2025, 0, 31, 23, 59, 59, 999)), "2025-01-31T23:59:59.999Z");
});
