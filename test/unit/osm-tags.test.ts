import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  accessOf,
  isRoutableWay,
  nameOf,
  onewayOf,
  parseMaxspeed,
  roadClassOf,
  roadTypeOf,
  speedOf,
} from "../../src/engine/network/osm-tags.js";
import { ACCESS_BIKE, ACCESS_CAR, ACCESS_FOOT } from "../../src/engine/network/types.js";

const ALL = ACCESS_CAR | ACCESS_BIKE | ACCESS_FOOT;

describe("OSM tag rules", () => {
  it("parses maxspeed values", () => {
    assert.equal(parseMaxspeed("50"), 50);
    assert.equal(parseMaxspeed("50 km/h"), 50);
    assert.ok(Math.abs(parseMaxspeed("30 mph")! - 48.28032) < 1e-9);
    assert.ok(Math.abs(parseMaxspeed("30mph")! - 48.28032) < 1e-9);
    assert.equal(parseMaxspeed("walk"), 5);
    assert.equal(parseMaxspeed("none"), 130);
    assert.equal(parseMaxspeed("DE:urban"), 50);
    assert.equal(parseMaxspeed("DE:rural"), 100);
    assert.equal(parseMaxspeed("FR:rural"), 80);
    assert.equal(parseMaxspeed("IT:rural"), 90);
    assert.equal(parseMaxspeed("DE:zone30"), 30);
    assert.equal(parseMaxspeed("DE:zone:20"), 20);
    assert.equal(parseMaxspeed("DE:living_street"), 10);
    assert.equal(parseMaxspeed("RU:motorway"), 130);
    assert.ok(Math.abs(parseMaxspeed("GB:nsl_single")! - 96.56064) < 1e-9);
    assert.equal(parseMaxspeed("70;50"), 70);
    for (const bad of ["signals", "variable", "fast", "0", "", "XX:nowhere", undefined])
      assert.equal(parseMaxspeed(bad), null, String(bad));
  });

  it("falls back to a per-class speed", () => {
    assert.equal(speedOf({ highway: "motorway" }), 110);
    assert.equal(speedOf({ highway: "residential" }), 30);
    assert.equal(speedOf({ highway: "residential", maxspeed: "signals" }), 30);
    assert.equal(speedOf({ highway: "residential", maxspeed: "20" }), 20);
    assert.equal(speedOf({ highway: "footway" }), 5);
  });

  it("derives the travel direction", () => {
    assert.equal(onewayOf({ highway: "residential" }), "both");
    for (const v of ["yes", "true", "1"])
      assert.equal(onewayOf({ highway: "residential", oneway: v }), "forward");
    assert.equal(onewayOf({ highway: "residential", oneway: "-1" }), "reverse");
    assert.equal(onewayOf({ highway: "motorway" }), "forward");
    assert.equal(onewayOf({ highway: "motorway", oneway: "no" }), "both");
    assert.equal(onewayOf({ highway: "primary", junction: "roundabout" }), "forward");
    assert.equal(onewayOf({ highway: "primary", junction: "circular" }), "forward");
    assert.equal(onewayOf({ highway: "primary", junction: "roundabout", oneway: "no" }), "both");
    assert.equal(onewayOf({ highway: "motorway_link" }), "both");
  });

  it("maps highways to classes and road types", () => {
    assert.equal(roadClassOf("motorway_link"), "ramp");
    assert.equal(roadClassOf("tertiary_link"), "ramp");
    assert.equal(roadClassOf("living_street"), "living_street");
    assert.equal(roadTypeOf("motorway"), "Primary");
    assert.equal(roadTypeOf("trunk"), "Primary");
    assert.equal(roadTypeOf("primary"), "Primary");
    assert.equal(roadTypeOf("secondary"), "Secondary");
    assert.equal(roadTypeOf("tertiary"), "Secondary");
    assert.equal(roadTypeOf("primary_link"), "Ramp");
    assert.equal(roadTypeOf("residential"), "Local");
    assert.equal(roadTypeOf("footway"), "Local");
  });

  it("keeps only routable highways", () => {
    assert.equal(isRoutableWay({ highway: "residential" }), true);
    assert.equal(isRoutableWay({ highway: "steps" }), true);
    assert.equal(isRoutableWay({ highway: "pedestrian", area: "yes" }), false);
    for (const h of [
      "construction",
      "proposed",
      "abandoned",
      "platform",
      "raceway",
      "bus_guideway",
      "bus_stop",
    ])
      assert.equal(isRoutableWay({ highway: h }), false, h);
    assert.equal(isRoutableWay({ building: "yes" }), false);
  });

  it("names a way by name, else ref", () => {
    assert.equal(nameOf({ name: "Rue Grimaldi", ref: "D 6" }), "Rue Grimaldi");
    assert.equal(nameOf({ ref: "A 8" }), "A 8");
    assert.equal(nameOf({}), null);
  });

  it("decides who may travel", () => {
    assert.equal(accessOf({ highway: "residential" }), ALL);
    assert.equal(accessOf({ highway: "motorway" }), ACCESS_CAR);
    assert.equal(accessOf({ highway: "motorway_link" }), ACCESS_CAR);
    assert.equal(accessOf({ highway: "trunk" }), ACCESS_CAR);
    assert.equal(accessOf({ highway: "trunk", bicycle: "yes", foot: "yes" }), ALL);
    assert.equal(accessOf({ highway: "service", access: "private" }), ALL);
    assert.equal(accessOf({ highway: "service", access: "no" }), 0);
    assert.equal(accessOf({ highway: "service", access: "no", foot: "yes" }), ACCESS_FOOT);
    assert.equal(accessOf({ highway: "track", motor_vehicle: "no" }), ACCESS_BIKE | ACCESS_FOOT);
    assert.equal(accessOf({ highway: "track", motor_vehicle: "no", motorcar: "yes" }), ALL);
    assert.equal(accessOf({ highway: "residential", bicycle: "no" }), ACCESS_CAR | ACCESS_FOOT);
    assert.equal(accessOf({ highway: "residential", foot: "no" }), ACCESS_CAR | ACCESS_BIKE);
    assert.equal(accessOf({ highway: "footway" }), ACCESS_FOOT);
    assert.equal(accessOf({ highway: "footway", bicycle: "designated" }), ACCESS_BIKE | ACCESS_FOOT);
    assert.equal(accessOf({ highway: "path", access: "yes" }), ACCESS_FOOT);
    assert.equal(accessOf({ highway: "pedestrian", bicycle: "yes" }), ACCESS_BIKE | ACCESS_FOOT);
    assert.equal(accessOf({ highway: "cycleway" }), ACCESS_BIKE | ACCESS_FOOT);
    assert.equal(accessOf({ highway: "cycleway", foot: "no" }), ACCESS_BIKE);
    assert.equal(accessOf({ highway: "steps" }), ACCESS_FOOT);
  });
});
