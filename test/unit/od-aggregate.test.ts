import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Network } from "../../src/engine/network/network.js";
import { compileZoneSet } from "../../src/engine/zones/compile.js";
import { OdAggregator, type OdTrip } from "../../src/engine/analysis/od-aggregate.js";
import { LocalClock } from "../../src/engine/time.js";
import { at, seg } from "../helpers/network.js";

const network = new Network("xx", [
  seg(1, 0, 1, 2, [
    [0, 0],
    [150, 0],
  ]),
  seg(1, 1, 2, 3, [
    [150, 0],
    [300, 0],
  ]),
]);
const box = (name: string, x0: number, x1: number) => ({
  geometry: {
    type: "MultiPolygon",
    coordinates: [[[at(x0, -20), at(x1, -20), at(x1, 20), at(x0, 20), at(x0, -20)]]],
  },
  properties: { name, is_pass: 0 },
});
const zones = compileZoneSet([box("West", -20, 50), box("East", 250, 320)], network);

const slicing = {
  dayTypes: [{ weekdays: [1, 2, 3, 4, 5, 6, 7] }, { weekdays: [1, 2, 3, 4, 5] }, { weekdays: [6, 7] }],
  dayParts: [
    { startHour: 0, endHour: 23 },
    { startHour: 6, endHour: 9 },
  ],
  // Monday 6 to Sunday 12 January 2025: 7 days, 5 weekdays, 2 weekend days.
  dateSpans: [{ from: "2025-01-06", to: "2025-01-12" }],
};

function trip(startIso: string, minutes: number, eastbound = true): OdTrip {
  const startT = Date.parse(startIso);
  return {
    origin: eastbound ? at(10, 0) : at(290, 0),
    destination: eastbound ? at(290, 0) : at(10, 0),
    segments: eastbound ? [0, 1] : [1, 0],
    forward: eastbound ? [1, 1] : [0, 0],
    startT,
    endT: startT + minutes * 60_000,
    groups: [0],
    weight: 1,
  };
}

describe("OD aggregation by day type and day part", () => {
  const agg = new OdAggregator(zones, zones, true, slicing, new LocalClock("UTC"));
  for (let i = 0; i < 10; i++) agg.add(trip("2025-01-06T07:00:00Z", 10));
  for (let i = 0; i < 4; i++) agg.add(trip("2025-01-11T12:00:00Z", 20));
  agg.add(trip("2025-01-20T07:00:00Z", 10)); // outside the date range
  agg.add(trip("2025-01-07T08:30:00Z", 6, false));
  const rows = agg.rows(1);
  const cell = (o: number, d: number, dt: number, dp: number) =>
    rows.find((r) => r.origin === o && r.destination === d && r.dayType === dt && r.dayPart === dp);

  it("counts the days of each day type in the date ranges", () => {
    assert.deepEqual(agg.dayCounts(), [7, 5, 2]);
  });

  it("averages trips per day of the day type and rounds to integers", () => {
    assert.equal(cell(0, 1, 0, 0)?.odTraffic, 2); // 14 trips / 7 days
    assert.equal(cell(0, 1, 0, 1)?.odTraffic, 1); // 10 / 7
    assert.equal(cell(0, 1, 1, 0)?.odTraffic, 2); // 10 / 5
    assert.equal(cell(0, 1, 1, 1)?.odTraffic, 2);
    assert.equal(cell(0, 1, 2, 0)?.odTraffic, 2); // 4 / 2
    assert.equal(cell(0, 1, 2, 1), undefined, "no weekend peak-AM trips, no row");
  });

  it("reports mean sampled duration in minutes and zone totals", () => {
    assert.equal(cell(0, 1, 0, 0)?.avgDurationMin, 13); // (10×10 + 4×20) / 14 = 12.9
    assert.equal(cell(0, 1, 0, 0)?.sample, 14);
    assert.equal(cell(0, 1, 0, 0)?.originTraffic, 2);
    assert.equal(cell(1, 0, 1, 1)?.odTraffic, 0); // one trip over five weekdays rounds to 0
    assert.equal(cell(1, 0, 1, 1)?.sample, 1);
  });

  it("orders rows day type first and day part last", () => {
    const order = rows.map((r) => [r.dayType, r.origin, r.destination, r.dayPart].join(""));
    assert.deepEqual(order, ["0010", "0011", "0100", "0101", "1010", "1011", "1100", "1101", "2010"]);
  });

  it("ignores trips outside the date ranges", () => {
    assert.equal(agg.tripsSeen, 16);
    assert.equal(agg.tripsInZones, 15);
  });
});

describe("OD aggregation over overlapping device groups", () => {
  const make = () => new OdAggregator(zones, zones, true, slicing, new LocalClock("UTC"));
  const withGroups = (t: OdTrip, groups: number[], weight: number): OdTrip => ({ ...t, groups, weight });
  const agg = make();
  // Personal-like ([0, 1]) and commercial-like ([0, 2]) trips: group 0 holds both.
  for (let i = 0; i < 3; i++) agg.add(withGroups(trip("2025-01-06T07:00:00Z", 10), [0, 1], 1.5));
  agg.add(withGroups(trip("2025-01-06T07:30:00Z", 30), [0, 2], 2));
  const rows = agg.rows(3);
  const find = (g: number, dt: number, dp: number) =>
    rows.find((r) => r.group === g && r.dayType === dt && r.dayPart === dp && r.origin === 0);

  it("sums every group a trip counts in, in each day type and part", () => {
    assert.equal(find(0, 1, 1)?.sample, 4);
    assert.equal(find(0, 1, 1)?.odTraffic, 1); // (3 × 1.5 + 2) / 5 weekdays = 1.3
    assert.equal(find(0, 1, 1)?.avgDurationMin, 15); // (3 × 10 + 30) / 4
    assert.equal(find(1, 1, 1)?.sample, 3);
    assert.equal(find(2, 0, 0)?.sample, 1);
    assert.equal(find(2, 0, 0)?.avgDurationMin, 30);
    assert.equal(find(2, 2, 0), undefined, "no weekend trips");
    assert.equal(agg.zoneTraffic("origin", 0, 0, 0, 0), 1); // 6.5 / 7 days
    assert.equal(agg.zoneTraffic("origin", 0, 1, 1, 0), 1); // 4.5 / 5 weekdays
  });

  it("merges exported sums into the same rows, or only the cells of the groups asked for", () => {
    const merged = make();
    merged.absorb(agg.exportState());
    assert.deepEqual(merged.rows(3), rows);
    const commercial = make();
    commercial.absorb(agg.exportState(), [2]);
    assert.deepEqual(
      commercial.rows(3),
      rows.filter((r) => r.group === 2),
    );
    assert.equal(commercial.zoneTraffic("origin", 0, 0, 0, 0), 1, "zone totals are always merged");
  });
});
