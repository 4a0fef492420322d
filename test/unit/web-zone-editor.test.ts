import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../../src/web/client/api.js";
import { issuesOf } from "../../src/web/client/views/zone-editor/api.js";
import { makeTestApp } from "../helpers/app.js";
import { zippedShapefile } from "../helpers/shapefile.js";
import { readZoneFile, sortFeatures, ZoneFileError } from "../../src/web/client/views/zone-editor/files.js";
import {
  checkZonesLocally,
  editableGeometry,
  emptyForm,
  formFromProperties,
  groupIssues,
  issueTarget,
  nextZoneName,
  propertiesFromForm,
  rectangleAround,
  withoutZoneLabel,
  zoneSetBody,
  type ZoneForm,
} from "../../src/web/client/views/zone-editor/model.js";

const polygons = { kind: "polygon", withCalibration: false } as const;
const lines = { kind: "line", withCalibration: false } as const;
const form = (changes: Partial<ZoneForm>): ZoneForm => ({ ...emptyForm(), ...changes });

describe("zone editor: API issue paths → zones", () => {
  it("finds the zone and property of a feature path, in either form the API writes", () => {
    assert.deepEqual(issueTarget("zones.features[3].properties.name"), {
      zone: 3,
      property: "name",
      part: "properties.name",
    });
    assert.deepEqual(issueTarget("zones[12].geometry.type"), {
      zone: 12,
      property: null,
      part: "geometry.type",
    });
    assert.deepEqual(issueTarget("zones.features[0]"), { zone: 0, property: null, part: null });
  });

  it("leaves set-wide fields to the set", () => {
    for (const field of [
      "zone_set_name",
      "insight_login_email",
      "zones",
      "zones.features",
      "with_calibration",
    ])
      assert.deepEqual(issueTarget(field), { zone: null, field });
  });

  it("groups issues by zone without the zone label the API puts in front", () => {
    const grouped = groupIssues([
      { field: "zone_set_name", message: "zone_set_name must have at most 50 characters" },
      {
        field: "zones.features[1].properties.direction",
        message: 'zone "Main St" (#1): direction must be an integer 0..359',
      },
      {
        field: "zones.features[1].geometry",
        message: "zone #1: geometry coordinates[0] is a ring and needs at least 4 positions",
      },
    ]);
    assert.deepEqual(
      grouped.general.map((i) => i.field),
      ["zone_set_name"],
    );
    assert.deepEqual(grouped.byZone.get(1), [
      { property: "direction", message: "direction must be an integer 0..359" },
      { property: null, message: "geometry coordinates[0] is a ring and needs at least 4 positions" },
    ]);
    assert.equal(withoutZoneLabel("a message without label"), "a message without label");
  });
});

describe("zone editor: refused saves as issues", () => {
  it("takes a 400's issues, or the one field of a 403 or 409; other failures are not about fields", () => {
    const issues = [{ field: "zones.features[0].properties.name", message: "name is required" }];
    assert.deepEqual(issuesOf(new ApiError(400, "validation_failed", "…", issues[0].field, issues)), issues);
    assert.deepEqual(issuesOf(new ApiError(403, "not_a_member", "x is not a user", "insight_login_email")), [
      { field: "insight_login_email", message: "x is not a user" },
    ]);
    for (const status of [0, 401, 500]) assert.equal(issuesOf(new ApiError(status, "e", "m")), null);
    assert.equal(issuesOf(new Error("boom")), null);
  });
});

describe("zone editor: form ↔ feature properties", () => {
  it("sends only what applies: direction and both-ways on pass-through zones, numbers as numbers", () => {
    const f = form({ name: " Harbour ", id: "7", is_pass: true, direction: "90", is_bidi: true });
    assert.deepEqual(propertiesFromForm(f, polygons), {
      name: "Harbour",
      id: 7,
      is_pass: 1,
      direction: 90,
      is_bidi: 1,
    });
    // Not pass-through: the direction typed earlier is hidden and not sent.
    assert.deepEqual(propertiesFromForm({ ...f, is_pass: false }, polygons), {
      name: "Harbour",
      id: 7,
      is_pass: 0,
    });
  });

  it("makes line zones pass-through and gives them road type and gate fields", () => {
    const f = form({ name: "Gate", road_type: "Ramp", gate_lat: "43.7", gate_lng: "7.4", gate_size: "30" });
    assert.deepEqual(propertiesFromForm(f, lines), {
      name: "Gate",
      is_pass: 1,
      road_type: "Ramp",
      gate_lat: 43.7,
      gate_lng: 7.4,
      gate_size: 30,
    });
    assert.equal(propertiesFromForm(f, polygons).road_type, undefined);
  });

  it("sends calibration only with calibration on a pass-through zone, and values only with their switch", () => {
    const f = form({
      name: "Counted",
      is_pass: true,
      calibration_type: "AADT",
      calibration_value: "12000",
      personal_traffic_ratio: "0.96",
      medium_commercial_ratio: "0.02",
      heavy_commercial_ratio: "0.02",
      has_bike_calibration: true,
      bike_calibration_value: "40",
      pedestrian_calibration_value: "5",
    });
    const calibrated = { kind: "polygon", withCalibration: true } as const;
    assert.deepEqual(propertiesFromForm(f, calibrated), {
      name: "Counted",
      is_pass: 1,
      calibration_type: "AADT",
      calibration_value: 12000,
      personal_traffic_ratio: 0.96,
      medium_commercial_ratio: 0.02,
      heavy_commercial_ratio: 0.02,
      has_pedestrian_calibration: false,
      has_bike_calibration: true,
      bike_calibration_value: 40,
    });
    assert.deepEqual(Object.keys(propertiesFromForm(f, polygons)), ["name", "is_pass"]);
  });

  it("reads file properties into a form: 0/1 flags, numbers as text, choices in their spelling", () => {
    const f = formFromProperties({
      name: "A",
      id: 3,
      is_pass: 1,
      direction: 0,
      is_bidi: "1",
      road_type: "local",
      extra: 1,
    });
    assert.deepEqual(
      [f.name, f.id, f.is_pass, f.direction, f.is_bidi, f.road_type],
      ["A", "3", true, "0", true, "Local"],
    );
    // A round trip keeps what the API stores.
    const stored = { name: "B", id: 9, is_pass: 1, direction: 270, is_bidi: 0, geom_type: "polygon" };
    const { geom_type: _, ...sent } = stored;
    assert.deepEqual(propertiesFromForm(formFromProperties(stored), polygons), sent);
  });

  it("keeps what is not a number as typed, for the server to name", () => {
    assert.equal(propertiesFromForm(form({ name: "A", id: "seven" }), polygons).id, "seven");
  });
});

describe("zone editor: checks before sending", () => {
  it("reports empty, long and duplicate names, and bad or duplicate ids, at the API's paths", () => {
    const issues = checkZonesLocally(
      [
        form({ name: "Main", id: "4" }),
        form({ name: "" }),
        form({ name: "main", id: "4" }),
        form({ name: "x".repeat(51), id: "0" }),
        form({ name: "Gate", is_pass: true, direction: "360" }),
      ],
      polygons,
    );
    assert.deepEqual(issues, [
      { field: "zones.features[1].properties.name", message: "name is required" },
      {
        field: "zones.features[2].properties.name",
        message: "name is already used by zone #0 (names are unique, case-insensitive)",
      },
      { field: "zones.features[2].properties.id", message: "id 4 is already used by zone #0" },
      {
        field: "zones.features[3].properties.name",
        message: "name must have at most 50 characters (has 51)",
      },
      { field: "zones.features[3].properties.id", message: "id must be an integer greater than 0" },
      { field: "zones.features[4].properties.direction", message: "direction must be an integer 0..359" },
    ]);
  });

  it("names new zones after the first free number", () => {
    assert.equal(nextZoneName([]), "Zone 1");
    assert.equal(nextZoneName([form({ name: "zone 2" }), form({ name: "Other" })]), "Zone 3");
  });

  it("builds a body the API accepts", async () => {
    const ctx = await makeTestApp();
    try {
      const body = zoneSetBody({
        ...polygons,
        name: " Centre ",
        email: ctx.orgA.email,
        zones: [
          { geometry: rectangleAround([11.5, 48.1], 0.01, 0.01), form: form({ name: "Square", id: "1" }) },
        ],
      });
      const res = await ctx.app.inject({
        method: "POST",
        url: `/api/v2/zone_sets?key=${ctx.orgA.key}`,
        payload: body,
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().name, "Centre");
    } finally {
      await ctx.app.close();
    }
  });
});

describe("zone editor: shapes and files", () => {
  it("edits one-part shapes and keeps several parts or holes fixed", () => {
    const ring = [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 0],
    ];
    assert.deepEqual(editableGeometry({ type: "MultiPolygon", coordinates: [[ring]] }), {
      type: "Polygon",
      coordinates: [ring],
    });
    assert.equal(editableGeometry({ type: "MultiPolygon", coordinates: [[ring], [ring]] }), null);
    assert.equal(editableGeometry({ type: "Polygon", coordinates: [ring, ring] }), null);
    assert.deepEqual(
      editableGeometry({
        type: "LineString",
        coordinates: [
          [0.1234567891234, 1],
          [2, 3],
        ],
      }),
      {
        type: "LineString",
        coordinates: [
          [0.123456789, 1],
          [2, 3],
        ],
      },
    );
  });

  it("reads a zipped shapefile with its attributes", async () => {
    const zip = zippedShapefile([
      {
        ring: [
          [7.41, 43.73],
          [7.41, 43.74],
          [7.42, 43.74],
          [7.41, 43.73],
        ],
        attributes: { name: "West", is_pass: 1 },
      },
    ]);
    // What File.arrayBuffer() gives the page: the zip's bytes in an ArrayBuffer of their own.
    const features = await readZoneFile("zones.zip", new Uint8Array(zip).buffer);
    const sorted = sortFeatures(features, null);
    assert.equal(sorted.kind, "polygon");
    assert.equal(formFromProperties(sorted.zones[0].properties).name, "West");
    assert.equal(formFromProperties(sorted.zones[0].properties).is_pass, true);
  });

  it("reads GeoJSON and leaves out what is not a zone of the set's kind, saying so", async () => {
    const line = {
      type: "Feature",
      geometry: {
        type: "LineString",
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      },
      properties: { name: "L" },
    };
    const point = { type: "Feature", geometry: { type: "Point", coordinates: [0, 0] }, properties: {} };
    const polygon = {
      ...line,
      geometry: {
        type: "Polygon",
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
    };
    const bytes = new TextEncoder().encode(
      JSON.stringify({ type: "FeatureCollection", features: [point, line, polygon, line] }),
    );
    const sorted = sortFeatures(await readZoneFile("mixed.GeoJSON", bytes.buffer), null);
    assert.equal(sorted.kind, "line");
    assert.equal(sorted.zones.length, 2);
    assert.equal(
      sorted.skipped,
      "Left out: 1 without a polygon or line geometry, 1 polygon feature (a set holds lines only).",
    );
  });

  it("refuses unreadable files with a message for the user", async () => {
    const bytes = (text: string) => new TextEncoder().encode(text).buffer;
    await assert.rejects(readZoneFile("a.json", bytes("{")), new ZoneFileError("a.json is not valid JSON."));
    await assert.rejects(readZoneFile("a.zip", bytes("PK?")), /could not be read as a zipped shapefile/);
    await assert.rejects(readZoneFile("a.kml", bytes("<kml/>")), /choose a .geojson or .json file/);
    await assert.rejects(readZoneFile("a.json", bytes('{"type":"Point"}')), /holds no GeoJSON features/);
    assert.throws(() => sortFeatures([], null), /no features/);
    assert.throws(() => sortFeatures([{ type: "Feature", geometry: null }], null), /no polygons or lines/);
  });
});
