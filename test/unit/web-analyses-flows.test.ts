import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCsv, csvRecords } from "../../src/web/client/views/analyses/csv.js";
import { flowArc, zoneAnchor } from "../../src/web/client/views/analyses/geometry.js";
import {
  dayPartProfile,
  flowFeatures,
  flowsInSlice,
  isHomeWorkMetric,
  parseHomeWorkCsv,
  parseOdCsv,
  SUPPRESSED_PLACES,
  sliceOptions,
  sortFlows,
  topFlows,
  zoneAnchors,
  type OdFlow,
} from "../../src/web/client/views/analyses/flows.js";
import { boxFeature } from "../helpers/zones.js";

const HEADER =
  "device_type,origin_zone_id,origin_zone_name,origin_zone_is_pass_through,origin_zone_direction," +
  "destination_zone_id,destination_zone_name,destination_zone_is_pass_through,destination_zone_direction," +
  "day_type,day_part,o_d_traffic,origin_zone_traffic,destination_zone_traffic,avg_trip_duration";
const row = (o: string, d: string, dayType: string, dayPart: string, traffic: number, duration = "7") =>
  `All Vehicles,1,${o},no,N/A,2,${d},no,N/A,${dayType},${dayPart},${traffic},${traffic * 2},${traffic * 3},${duration}`;
const DAY = "0: Average Day (M-Su)";
const WEEKEND = "1: Average Weekend Day (Sa-Su)";
const ALL = "0: All Day (12am-12am)";
const PEAK = "1: Peak AM (6am-10am)";
const CSV = [
  HEADER,
  row("A", "B", DAY, ALL, 10),
  row("A", "B", DAY, PEAK, 4),
  row("B", "A", DAY, ALL, 3, ""),
  row("A", "A", DAY, ALL, 5),
  row("B", "A", WEEKEND, PEAK, 8),
  "",
].join("\n");

describe("web analyses: CSV", () => {
  it("reads quoted fields with commas, doubled quotes, line breaks and CRLF line ends", () => {
    assert.deepEqual(parseCsv('a,b\r\n"x, y","say ""hi"""\n"two\nlines",\n'), [
      ["a", "b"],
      ["x, y", 'say "hi"'],
      ["two\nlines", ""],
    ]);
    assert.deepEqual(parseCsv("a,b\n1,2"), [
      ["a", "b"],
      ["1", "2"],
    ]);
    assert.deepEqual(csvRecords("a,b\n1\n").records, [{ a: "1", b: "" }]);
  });

  it("reads OD rows with numbers and an empty duration as null; refuses another metric", () => {
    const flows = parseOdCsv(CSV);
    assert.equal(flows.length, 5);
    assert.deepEqual(flows[0], {
      deviceType: "All Vehicles",
      originId: "1",
      originName: "A",
      destinationId: "2",
      destinationName: "B",
      dayType: DAY,
      dayPart: ALL,
      odTraffic: 10,
      originTraffic: 20,
      destinationTraffic: 30,
      avgTripDuration: 7,
    });
    assert.equal(flows[2].avgTripDuration, null);
    assert.throws(() => parseOdCsv("data_period,day_type\n"), /no column device_type/);
  });
});

describe("web analyses: slices, sorting and profiles", () => {
  const flows = parseOdCsv(CSV);

  it("lists day types and parts in request order whatever the row order", () => {
    const reordered = [flows[4], ...flows.slice(0, 4)];
    assert.deepEqual(sliceOptions(reordered), {
      deviceTypes: ["All Vehicles"],
      dayTypes: [DAY, WEEKEND],
      dayParts: [ALL, PEAK],
    });
  });

  it("keeps one slice and sums a pair listed twice, weighting its duration by traffic", () => {
    const slice = { deviceType: "All Vehicles", dayType: DAY, dayPart: ALL };
    assert.deepEqual(
      flowsInSlice(flows, slice).map((f) => [f.originName, f.destinationName, f.odTraffic]),
      [
        ["A", "B", 10],
        ["B", "A", 3],
        ["A", "A", 5],
      ],
    );
    const twice = [flows[0], { ...flows[0], odTraffic: 30, avgTripDuration: 11 }];
    const [merged] = flowsInSlice(twice, slice);
    assert.equal(merged.odTraffic, 40);
    assert.equal(merged.avgTripDuration, 10);
  });

  it("sorts by numbers or names in both directions, empty values last, ties by pair", () => {
    const slice = flowsInSlice(flows, { deviceType: "All Vehicles", dayType: DAY, dayPart: ALL });
    const names = (list: OdFlow[]) => list.map((f) => `${f.originName}>${f.destinationName}`);
    assert.deepEqual(names(sortFlows(slice, "odTraffic", "descending")), ["A>B", "A>A", "B>A"]);
    assert.deepEqual(names(sortFlows(slice, "odTraffic", "ascending")), ["B>A", "A>A", "A>B"]);
    assert.deepEqual(names(sortFlows(slice, "originName", "descending")), ["B>A", "A>A", "A>B"]);
    assert.deepEqual(names(sortFlows(slice, "avgTripDuration", "ascending")), ["A>A", "A>B", "B>A"]);
    assert.deepEqual(names(sortFlows(slice, "avgTripDuration", "descending")), ["A>A", "A>B", "B>A"]);
    assert.deepEqual(names(topFlows(slice, 2)), ["A>B", "A>A"]);
    assert.equal(topFlows(slice, null).length, 3);
  });

  it("profiles traffic by day part for all pairs or one pair", () => {
    const slice = { deviceType: "All Vehicles", dayType: DAY };
    assert.deepEqual(dayPartProfile(flows, slice), [
      { dayPart: ALL, traffic: 18 },
      { dayPart: PEAK, traffic: 4 },
    ]);
    assert.deepEqual(dayPartProfile(flows, slice, { originName: "B", destinationName: "A" }), [
      { dayPart: ALL, traffic: 3 },
      { dayPart: PEAK, traffic: 0 },
    ]);
    const early = "1: Early AM (12am-6am)";
    const peak = "2: Peak AM (6am-10am)";
    assert.deepEqual(dayPartProfile(flows, slice, undefined, [ALL, early, peak]), [
      { dayPart: ALL, traffic: 18 },
      { dayPart: early, traffic: 0 },
      { dayPart: peak, traffic: 0 },
    ]);
  });
});

describe("web analyses: flow geometry", () => {
  it("anchors polygons at their area centroid (holes subtract) and lines at half their length", () => {
    assert.deepEqual(zoneAnchor(boxFeature("b", 1, [0, 0, 2, 1]).geometry as never), [1, 0.5]);
    // An L made of two boxes: [0,0]-[2,1] (area 2) and [0,1]-[1,3] (area 2) → centroid (0.75, 1.25).
    const l = zoneAnchor({
      type: "MultiPolygon",
      coordinates: [
        (boxFeature("a", 1, [0, 0, 2, 1]).geometry as { coordinates: number[][][] }).coordinates,
        (boxFeature("b", 1, [0, 1, 1, 3]).geometry as { coordinates: number[][][] }).coordinates,
      ],
    })!;
    assert.ok(Math.abs(l[0] - 0.75) < 1e-12 && Math.abs(l[1] - 1.25) < 1e-12);
    // A 4×4 square with a 2×2 hole in its right half, wound either way: centroid shifts left.
    const outer = [
      [0, 0],
      [4, 0],
      [4, 4],
      [0, 4],
      [0, 0],
    ];
    const hole = [
      [2, 1],
      [4, 1],
      [4, 3],
      [2, 3],
      [2, 1],
    ];
    for (const h of [hole, [...hole].reverse()]) {
      const c = zoneAnchor({ type: "Polygon", coordinates: [outer, h] })!;
      assert.ok(Math.abs(c[0] - (16 * 2 - 4 * 3) / 12) < 1e-12 && Math.abs(c[1] - 2) < 1e-12);
    }
    assert.deepEqual(
      zoneAnchor({
        type: "LineString",
        coordinates: [
          [0, 0],
          [0, 1],
          [0, 4],
        ],
      }),
      [0, 2],
    );
    assert.equal(zoneAnchor(null), null);
  });

  it("bows A→B and B→A to opposite sides and points the arrow along the travel direction", () => {
    const a: [number, number] = [7.41, 43.73];
    const b: [number, number] = [7.43, 43.73];
    const east = flowArc(a, b);
    const west = flowArc(b, a);
    assert.deepEqual(east.line[0], a);
    assert.ok(Math.abs(east.line.at(-1)![0] - b[0]) < 1e-12);
    // Heading east the right-hand side is south; heading west it is north.
    assert.ok(east.line[12][1] < 43.73 && west.line[12][1] > 43.73);
    assert.ok(east.bearing > 45 && east.bearing < 135, `bearing ${east.bearing}`);
    assert.ok(west.bearing > 225 && west.bearing < 315, `bearing ${west.bearing}`);
  });

  it("draws a line and an arrow per pair, a point for trips within a zone, and counts unplaced zones", () => {
    const anchors = zoneAnchors([
      boxFeature("A", 1, [7.41, 43.73, 7.42, 43.74]),
      boxFeature("b", 2, [7.43, 43.73, 7.44, 43.74]),
    ] as never);
    const slice = flowsInSlice(parseOdCsv(CSV), { deviceType: "All Vehicles", dayType: DAY, dayPart: ALL });
    const extra = { ...slice[0], originName: "Nowhere" };
    const { collection, unplaced } = flowFeatures([...slice, extra], anchors, anchors);
    assert.equal(unplaced, 1);
    const kinds = collection.features.map((f) => [
      f.properties!.kind,
      f.properties!.origin,
      f.properties!.share,
    ]);
    assert.deepEqual(kinds, [
      ["flow", "B", 0.3],
      ["arrow", "B", 0.3],
      ["intra", "A", 0.5],
      ["flow", "A", 1],
      ["arrow", "A", 1],
    ]);
  });
});

describe("home and work location metrics as flows from zones to places", () => {
  const head =
    "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part,traveler_type," +
    "grid_id,grid_west,grid_south,grid_east,grid_north,trip_share";
  const slice = "All Vehicles,1,West,no,N/A,0: Average Day (M-Su),0: All Day (12am-12am)";

  it("reads shares in percent per traveller kind and the grid cells as polygons", () => {
    assert.ok(isHomeWorkMetric("home_grid_all") && isHomeWorkMetric("work_admin_8_bike"));
    assert.ok(!isHomeWorkMetric("za_all") && !isHomeWorkMetric("home_grid"));
    const { flows, cells } = parseHomeWorkCsv(
      [
        head,
        `${slice},Visitor,9835_15040,7.42,43.72,7.43,43.73,0.667`,
        `${slice},Visitor,suppressed,,,,,0.333`,
        `${slice},Resident,9835_15041,7.43,43.72,7.44,43.73,1`,
        "",
      ].join("\n"),
    );
    assert.deepEqual(
      flows.map((f) => [f.deviceType, f.originName, f.destinationName, f.odTraffic]),
      [
        ["Visitor", "West", "Cell 9835_15040", 66.7],
        ["Visitor", "West", SUPPRESSED_PLACES, 33.3],
        ["Resident", "West", "Cell 9835_15041", 100],
      ],
    );
    assert.deepEqual(
      cells.map((c) => [c.properties?.name, c.geometry.type === "Polygon" && c.geometry.coordinates[0][2]]),
      [
        ["Cell 9835_15040", [7.43, 43.73]],
        ["Cell 9835_15041", [7.44, 43.73]],
      ],
    );
  });
});
