import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Network } from "../../src/engine/network/network.js";
import { readOsmNetwork } from "../../src/engine/network/osm-import.js";
import type { TransitRoute } from "../../src/engine/network/types.js";
import { TransitSimulation } from "../../src/engine/simulate/transit.js";
import type { MatchedTrip } from "../../src/engine/trips/types.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

describe("transit riders on Monaco's bus routes and rail lines", () => {
  let network: Network;
  let routes: TransitRoute[];
  let trips: MatchedTrip[];
  const options = { from: "2025-03", to: "2025-03", ridersPerDay: 8, seed: 5 };

  before(async () => {
    const osm = await readOsmNetwork(MONACO_PBF);
    network = new Network("mc", osm.segments);
    routes = osm.transit;
    trips = [...new TransitSimulation(network, routes, options).trips()];
  });

  const of = (c: string) => trips.filter((t) => t.vehicleClass === c);

  it("makes bus rides, rail rides and the walks to and from their stops", () => {
    assert.ok(of("bus").length > 50, `bus rides: ${of("bus").length}`);
    assert.ok(of("rail").length > 20, `rail rides: ${of("rail").length}`);
    assert.ok(of("pedestrian").length > of("bus").length, "most rides have a walk on each side");
    assert.deepEqual(new Set(trips.map((t) => t.source)), new Set(["lbs"]));
  });

  it("runs buses on their routes' roads", () => {
    const busWays = new Set(routes.filter((r) => r.kind === "bus").flatMap((r) => r.wayIds));
    for (const ride of of("bus")) {
      assert.ok(ride.path.length > 0);
      for (const step of ride.path) assert.ok(busWays.has(network.segmentById(step.segmentId)!.wayId));
    }
  });

  it("runs trains on the rail lines, off the road network, boarding and alighting on the line", () => {
    const lines = routes.filter((r) => r.kind === "rail").map((r) => r.coords);
    const onRail = (p: [number, number]) =>
      lines.some((line) => network.ruler.distance(p, network.ruler.pointOnLine(line, p).point) < 1);
    for (const ride of of("rail")) {
      assert.deepEqual(ride.path, []);
      assert.ok(ride.lengthM >= 500, `ride of ${ride.lengthM} m`);
      assert.ok(onRail(ride.origin) && onRail(ride.destination));
    }
  });

  it("keeps every leg in time order and walks of at least 200 m on footpaths", () => {
    for (const t of trips) {
      assert.ok(t.endT > t.startT);
      for (const s of t.path) assert.ok(s.exitT >= s.enterT && s.enterT >= t.startT && s.exitT <= t.endT);
    }
    for (const walk of of("pedestrian")) {
      assert.ok(walk.lengthM >= 200);
      for (const s of walk.path) assert.ok(network.allows(network.segmentById(s.segmentId)!, "foot"));
    }
  });

  it("gives the same trips for the same seed", () => {
    const again = [...new TransitSimulation(network, routes, options).trips()];
    assert.deepEqual(again, trips);
  });
});
