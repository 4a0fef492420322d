import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Network } from "../../src/engine/network/network.js";
import { compileZoneSet, gatesOf } from "../../src/engine/zones/compile.js";
import { destinationVisits, odPairs, originVisits, type TripPath } from "../../src/engine/zones/assign.js";
import { at, seg } from "../helpers/network.js";

// An east-west street of three 100 m segments along y = 0, x = 0..300.
const network = new Network("xx", [
  seg(1, 0, 1, 2, [
    [0, 0],
    [100, 0],
  ]),
  seg(1, 1, 2, 3, [
    [100, 0],
    [200, 0],
  ]),
  seg(1, 2, 3, 4, [
    [200, 0],
    [300, 0],
  ]),
]);

const box = (x0: number, x1: number, y0: number, y1: number) => ({
  type: "MultiPolygon",
  coordinates: [[[at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1), at(x0, y0)]]],
});
const zone = (
  name: string,
  geometry: { type: string; coordinates: unknown },
  props: Record<string, unknown> = {},
) => ({
  geometry,
  properties: { name, is_pass: 0, direction: null, is_bidi: 0, ...props },
});

function zones(middle: Record<string, unknown> = {}, gate: Record<string, unknown> = {}) {
  return [
    zone("West", box(-20, 50, -20, 20)),
    zone("East", box(250, 320, -20, 20)),
    zone("Middle", box(120, 180, -20, 20), { is_pass: 1, direction: 90, ...middle }),
    zone("Gate", { type: "LineString", coordinates: [at(130, 0), at(170, 0)] }, { is_pass: 1, ...gate }),
  ];
}

const eastbound: TripPath = {
  origin: at(10, 0),
  destination: at(290, 0),
  segments: [0, 1, 2],
  forward: [1, 1, 1],
};
const westbound: TripPath = {
  origin: at(290, 0),
  destination: at(10, 0),
  segments: [2, 1, 0],
  forward: [0, 0, 0],
};

function pairsOf(trip: TripPath, features = zones()): string[] {
  const set = compileZoneSet(features, network);
  const names = set.zones.map((z) => z.name);
  return odPairs(originVisits(set, trip), destinationVisits(set, trip), true)
    .map(([o, d]) => `${names[o]}>${names[d]}`)
    .sort();
}

describe("zone assignment", () => {
  it("pairs start/end zones, pass-through polygons and gates in the order the trip meets them", () => {
    assert.deepEqual(pairsOf(eastbound), [
      "Gate>East",
      "Middle>East",
      "Middle>Gate",
      "West>East",
      "West>Gate",
      "West>Middle",
    ]);
  });

  it("counts a trip that runs a pass-through zone's segment forward, back and forward once per pair", () => {
    const zigzag: TripPath = { ...eastbound, segments: [0, 1, 1, 1, 2], forward: [1, 1, 0, 1, 1] };
    assert.deepEqual(pairsOf(zigzag), pairsOf(eastbound));
  });

  it("drops a pass-through zone whose direction the trip does not travel", () => {
    assert.deepEqual(pairsOf(westbound), ["East>Gate", "East>West", "Gate>West"]);
  });

  it("keeps the opposite heading when the zone is bidirectional", () => {
    assert.deepEqual(pairsOf(westbound, zones({ is_bidi: 1 })), [
      "East>Gate",
      "East>Middle",
      "East>West",
      "Gate>West",
      "Middle>Gate",
      "Middle>West",
    ]);
  });

  it("applies a gate's direction to the heading at the crossing", () => {
    const westOnlyGate = zones({}, { direction: 270 });
    assert.ok(!pairsOf(eastbound, westOnlyGate).some((p) => p.includes("Gate")));
    assert.ok(pairsOf(westbound, westOnlyGate).includes("Gate>West"));
  });

  it("places a custom gate across the line at gate_lat/gate_lng, gate_size wide", () => {
    const [lon, lat] = at(250, 0);
    const f = zone(
      "G",
      { type: "LineString", coordinates: [at(210, 0), at(290, 0)] },
      {
        gate_lat: lat,
        gate_lng: lon,
        gate_size: 40,
      },
    );
    const [[a, b]] = gatesOf(network, f);
    assert.ok(Math.abs(network.ruler.distance(a, b) - 40) < 0.01);
    assert.ok(
      Math.abs(network.ruler.distance(network.ruler.pointOnLine([a, b], at(250, 0)).point, at(250, 0))) <
        0.01,
    );
    const set = compileZoneSet([f], network);
    assert.deepEqual([...set.passBySegment.keys()], [2], "only the third segment crosses the gate");
    assert.ok(Math.abs(set.passBySegment.get(2)![0].atForward - 0.5) < 1e-6);
  });

  it("counts a trip that starts and ends in one zone as intrazonal, never a pass-through zone with itself", () => {
    const short: TripPath = { origin: at(5, 0), destination: at(40, 0), segments: [0], forward: [1] };
    assert.deepEqual(pairsOf(short), ["West>West"]);
    const through = pairsOf(eastbound);
    assert.ok(!through.includes("Middle>Middle") && !through.includes("Gate>Gate"));
  });

  it("ignores trips that touch no zone", () => {
    const set = compileZoneSet([zone("Far", box(1000, 1100, 1000, 1100))], network);
    assert.deepEqual(odPairs(originVisits(set, eastbound), destinationVisits(set, eastbound), true), []);
  });
});
