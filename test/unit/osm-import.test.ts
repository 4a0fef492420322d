import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Network } from "../../src/engine/network/network.js";
import { readOsmSegments } from "../../src/engine/network/osm-import.js";
import { ACCESS_BIKE, ACCESS_CAR, ACCESS_FOOT, type Segment } from "../../src/engine/network/types.js";
import { sharedDataFile } from "../helpers/shared-data.js";
import { tempDir } from "../helpers/temp-dir.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const FIXTURE = here("../fixtures/t-junction.osm");
const BAYREUTH = sharedDataFile("osm-extracts/north-bayreuth.osm.gz");
const ANDORRA = sharedDataFile("osm-extracts/andorra.osm.pbf");

const summary = (s: Segment) => ({
  id: s.id,
  from: s.fromNode,
  to: s.toNode,
  oneway: s.oneway,
  vertices: s.coords.length,
});

describe("readOsmSegments on a hand-built OSM XML file", () => {
  let segments: Segment[];
  before(async () => {
    segments = await readOsmSegments(FIXTURE);
  });

  it("splits at junctions and loops, reverses oneway=-1, skips areas, non-roads and missing nodes", () => {
    assert.deepEqual(segments.map(summary), [
      { id: 100_0000, from: 1, to: 3, oneway: false, vertices: 3 },
      { id: 100_0001, from: 3, to: 4, oneway: false, vertices: 2 },
      { id: 200_0000, from: 3, to: 5, oneway: true, vertices: 3 },
      { id: 500_0000, from: 4, to: 7, oneway: false, vertices: 2 },
      { id: 600_0000, from: 11, to: 12, oneway: false, vertices: 2 },
      { id: 600_0001, from: 12, to: 12, oneway: false, vertices: 4 },
      { id: 700_0000, from: 21, to: 22, oneway: true, vertices: 2 },
    ]);
  });

  it("stores the reversed way's geometry from its end", () => {
    const side = segments.find((s) => s.wayId === 200)!;
    assert.deepEqual(side.coords, [
      [7.402, 43.73],
      [7.402, 43.729],
      [7.402, 43.728],
    ]);
    assert.equal(side.name, "D 6");
    assert.equal(side.speedKph, 50);
    assert.equal(side.roadClass, "tertiary");
    assert.equal(side.roadType, "Secondary");
  });

  it("fills the remaining attributes", () => {
    const main = segments.find((s) => s.id === 100_0000)!;
    assert.equal(main.name, "Main Street");
    assert.equal(main.access, ACCESS_CAR | ACCESS_BIKE | ACCESS_FOOT);
    assert.equal(main.index, 0);
    // 0.002° of longitude at 43.73° N is about 160.9 m.
    assert.ok(Math.abs(main.lengthM - 160.9) < 0.5, String(main.lengthM));
    const motorway = segments.find((s) => s.wayId === 700)!;
    assert.ok(Math.abs(motorway.speedKph - 80.4672) < 1e-9);
    assert.equal(motorway.access, ACCESS_CAR);
    assert.equal(segments.find((s) => s.wayId === 600)!.access, ACCESS_FOOT);
  });
});

describe("readOsmSegments on files it cannot read", () => {
  it("names the problem with a domain error code", async () => {
    const dir = tempDir("streetflow-osm-");
    const broken = join(dir, "broken.osm");
    writeFileSync(broken, "<osm><way id='1'><nd ref='1'/>");
    await assert.rejects(readOsmSegments(broken), { code: "invalid_osm_file" });
    await assert.rejects(readOsmSegments(join(dir, "roads.csv")), { code: "unsupported_osm_file" });
  });
});

describe("readOsmSegments on the shipped Monaco extract (PBF)", () => {
  let segments: Segment[];
  before(async () => {
    segments = await readOsmSegments(MONACO_PBF);
  });

  it("reads the regression segment count", () => {
    assert.equal(segments.length, 5330);
  });

  it("has every expected road class", () => {
    const classes = new Set(segments.map((s) => s.roadClass));
    for (const c of [
      "motorway",
      "primary",
      "secondary",
      "tertiary",
      "unclassified",
      "residential",
      "living_street",
      "service",
      "ramp",
      "track",
      "pedestrian",
      "footway",
      "cycleway",
      "path",
      "steps",
    ])
      assert.ok(classes.has(c as Segment["roadClass"]), c);
  });

  it("gives every segment a line of positive length and a unique id, sorted", () => {
    const ids = new Set<number>();
    let previous = -Infinity;
    for (const s of segments) {
      assert.ok(s.coords.length >= 2, `segment ${s.id}`);
      assert.ok(s.lengthM > 0, `segment ${s.id}`);
      assert.ok(s.id > previous, `segment ${s.id} out of order`);
      ids.add(s.id);
      previous = s.id;
    }
    assert.equal(ids.size, segments.length);
  });

  it("joins segments only at their end nodes: no interior vertex lies on another segment's end", () => {
    const ends = new Set(segments.flatMap((s) => [String(s.coords[0]), String(s.coords.at(-1))]));
    const interiorOnEnd = segments.flatMap((s) => s.coords.slice(1, -1)).filter((c) => ends.has(String(c)));
    assert.deepEqual(interiorOnEnd, []);
  });

  it("yields identical ids when imported again", async () => {
    const again = await readOsmSegments(MONACO_PBF);
    assert.deepEqual(
      again.map((s) => s.id),
      segments.map((s) => s.id),
    );
  });

  it("finds Boulevard Albert 1er at a known point", () => {
    const network = new Network("mc", segments);
    const [hit] = network.nearest([7.42184, 43.73336], 1, (s) => network.allows(s, "car"));
    assert.equal(hit.segment.name, "Boulevard Albert 1er");
    assert.equal(hit.segment.roadClass, "primary");
    assert.ok(hit.distanceM < 5, String(hit.distanceM));
  });
});

describe("readOsmSegments on shared extracts", () => {
  it("reads north Bayreuth from gzip OSM XML", { skip: !BAYREUTH && "extract absent" }, async () => {
    const segments = await readOsmSegments(BAYREUTH!);
    assert.ok(segments.length > 3000 && segments.length < 4500, String(segments.length));
    const classes = new Set(segments.map((s) => s.roadClass));
    for (const c of ["motorway", "ramp", "primary", "residential", "track"] as const)
      assert.ok(classes.has(c), c);
    const bbox = segments.flatMap((s) => s.coords);
    assert.ok(bbox.every(([lon, lat]) => lon > 11.3 && lon < 11.8 && lat > 49.9 && lat < 50.1));
  });

  it("reads Andorra from PBF", { skip: !ANDORRA && "extract absent" }, async () => {
    const segments = await readOsmSegments(ANDORRA!);
    assert.ok(segments.length > 2000 && segments.length < 4000, String(segments.length));
    assert.ok(segments.some((s) => s.roadClass === "primary" && s.name !== null));
  });
});
