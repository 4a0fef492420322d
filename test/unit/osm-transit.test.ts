import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readOsmNetwork, type OsmNetwork } from "../../src/engine/network/osm-import.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

/** A road (way 1) crossed by a railway at node 2 (a level crossing), a tram line, and a bus route. */
const XML = `<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6">
  <node id="1" lat="43.7300" lon="7.4200"/>
  <node id="2" lat="43.7300" lon="7.4210"/>
  <node id="3" lat="43.7300" lon="7.4220"/>
  <node id="4" lat="43.7290" lon="7.4210"/>
  <node id="5" lat="43.7310" lon="7.4210"/>
  <node id="6" lat="43.7310" lon="7.4230"/>
  <node id="7" lat="43.7320" lon="7.4230"/>
  <way id="1"><nd ref="1"/><nd ref="2"/><nd ref="3"/><tag k="highway" v="residential"/></way>
  <way id="2"><nd ref="4"/><nd ref="2"/><nd ref="5"/><tag k="railway" v="rail"/><tag k="name" v="Ligne"/></way>
  <way id="3"><nd ref="6"/><nd ref="7"/><tag k="railway" v="tram"/></way>
  <way id="4"><nd ref="6"/><nd ref="7"/><tag k="railway" v="platform"/></way>
  <way id="5"><nd ref="3"/><nd ref="6"/><tag k="highway" v="platform"/></way>
  <relation id="9">
    <member type="node" ref="1" role="stop"/>
    <member type="way" ref="5" role="platform"/>
    <member type="way" ref="1" role=""/>
    <tag k="type" v="route"/><tag k="route" v="bus"/><tag k="ref" v="7"/><tag k="name" v="Bus 7"/>
  </relation>
  <relation id="10">
    <member type="way" ref="1" role=""/>
    <tag k="type" v="route"/><tag k="route" v="bicycle"/>
  </relation>
</osm>`;

describe("the transit layer of an OSM import", () => {
  let xml: OsmNetwork;
  let monaco: OsmNetwork;
  before(async () => {
    const file = join(tempDir("streetflow-transit-"), "crossing.osm");
    writeFileSync(file, XML);
    xml = await readOsmNetwork(file);
    monaco = await readOsmNetwork(MONACO_PBF);
  });

  it("reads railway=rail|light_rail|subway|tram ways as rail lines with their geometry", () => {
    const rail = xml.transit.filter((r) => r.kind === "rail");
    assert.deepEqual(
      rail.map((r) => [r.osmId, r.service, r.name, r.wayIds, r.coords.length]),
      [
        [2, "rail", "Ligne", [2], 3],
        [3, "tram", null, [3], 2],
      ],
    );
  });

  it("keeps the road whole at a level crossing: rail nodes are no road junctions", () => {
    assert.deepEqual(
      xml.segments.map((s) => s.id),
      [1_0000],
    );
  });

  it("reads route=bus relations with the ways buses travel, not their stops and platforms", () => {
    const bus = xml.transit.filter((r) => r.kind === "bus");
    assert.deepEqual(bus, [
      { kind: "bus", osmId: 9, service: "bus", name: "Bus 7", ref: "7", wayIds: [1], coords: [] },
    ]);
  });

  it("finds Monaco's 10 bus routes, all on imported roads, and its rail lines", () => {
    const bus = monaco.transit.filter((r) => r.kind === "bus");
    const rail = monaco.transit.filter((r) => r.kind === "rail");
    assert.equal(bus.length, 10);
    const roads = new Set(monaco.segments.map((s) => s.wayId));
    for (const route of bus)
      assert.ok(
        route.wayIds.every((w) => roads.has(w)),
        `route ${route.osmId}`,
      );
    assert.equal(rail.length, 67);
    assert.ok(rail.every((r) => r.coords.length >= 2 && !roads.has(r.osmId)));
  });

  it("stores and reloads the layer per country, replacing an earlier import", async () => {
    const store = new SqliteStore(":memory:");
    await store.network.replaceTransit("mc", monaco.transit);
    await store.network.replaceTransit("mc", xml.transit);
    await store.network.replaceTransit("zz", monaco.transit);
    assert.deepEqual(await store.network.loadTransit("mc"), xml.transit);
    assert.equal((await store.network.loadTransit("zz")).length, monaco.transit.length);
    await store.close();
  });
});
