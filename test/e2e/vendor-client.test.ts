import { ANALYSIS_WORKER } from "../../src/main/runtime.js";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import shp from "shpjs";
import { buildApp } from "../../src/api/app.js";
import { issueApiKey } from "../../src/app/accounts.js";
import { storeNetworks } from "../../src/app/networks.js";
import { JobRunner } from "../../src/jobs/runner.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { at } from "../helpers/network.js";
import { boxZone, EMAIL, STREET, streetTrip } from "../helpers/street-scenario.js";

/**
 * A client written against the vendor's interface, run unchanged against Streetflow over real HTTP:
 * the requests are shaped as a published R client sends them (the key in `x-stl-key`, every vendor
 * option at its default, the stray key `"11": ""`), and its success checks are the reason phrases.
 */
describe("a vendor client, unchanged (real HTTP)", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-vendor-"));
  let app: FastifyInstance;
  let runner: JobRunner;
  let base = "";
  let key = "";
  const name = "Corridor study January";

  before(async () => {
    const store = new SqliteStore(join(dir, "streetflow.db"));
    await store.network.replaceCountry(
      { country: "mc", source: "test", segmentCount: 3, importedAt: "" },
      STREET,
    );
    const org = await store.accounts.createOrganization("Agency");
    await store.accounts.addUser(EMAIL, org.id);
    key = (await issueApiKey(store, org.id)).key;
    // Twelve eastbound trips on January weekdays and two westbound ones, in Monaco local time.
    const trips = Array.from({ length: 12 }, (_, i) =>
      streetTrip({
        device: `car${i}`,
        localIso: `2025-01-${String(6 + (i % 5)).padStart(2, "0")}T07:10:00`,
        minutes: 8,
      }),
    );
    trips.push(streetTrip({ device: "car0", localIso: "2025-01-07T17:00:00", minutes: 8, east: false }));
    trips.push(streetTrip({ device: "van", localIso: "2025-01-08T17:00:00", minutes: 8, east: false }));
    await store.trips.appendTrips("mc", trips);
    const networks = storeNetworks(store.network);
    app = await buildApp({ store, networks });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/api/v2/`;
    runner = await new JobRunner({
      store,
      queue: store.jobs,
      workerStore: { kind: "sqlite", file: store.file },
      workerModule: ANALYSIS_WORKER,
      pollMs: 20,
      heartbeatMs: 50,
    }).start();
  });
  after(async () => {
    await runner.stop();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** As the client builds requests: endpoint appended to the base URL, key in x-stl-key, JSON bodies. */
  const request = (endpoint: string, body?: unknown, method = body === undefined ? "GET" : "POST") =>
    fetch(base + endpoint, {
      method,
      headers: { "x-stl-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it("uploads its zone sets: polygons with a non-ASCII name, and a line gate", async () => {
    const polygons = await request("zone_sets", {
      insight_login_email: EMAIL,
      zone_set_name: "Street ends",
      zones: {
        type: "FeatureCollection",
        features: [boxZone("Ouest – Condamine", 1, -20, 50), boxZone("East", 2, 250, 320)],
      },
    });
    assert.equal(polygons.status, 201, await polygons.clone().text());
    const gate = await request("zone_sets", {
      insight_login_email: EMAIL,
      zone_set_name: "Gate",
      zones: {
        type: "FeatureCollection",
        features: [
          {
            type: "Feature",
            properties: { name: "Gate", id: 3, is_pass: 1, direction: 90, is_bidi: 1 },
            geometry: { type: "LineString", coordinates: [at(130, 0), at(170, 0)] },
          },
        ],
      },
    });
    assert.equal(gate.status, 201);
  });

  it("creates a tag: 201 Created", async () => {
    const res = await request("analyses/tags", { insight_login_email: EMAIL, tag_name: "corridor" });
    assert.equal(res.statusText, "Created");
  });

  it("creates the analysis with every vendor field at its default and a stray key: 201 Created", async () => {
    // The body create_streetlight_analysis() sends for an OD analysis with trip attributes off.
    const res = await request("analyses", {
      insight_login_email: EMAIL,
      analysis_name: name,
      analysis_type: "OD_Analysis",
      travel_mode_type: "All_Vehicles",
      output_type: "index",
      description: "",
      date_ranges: [{ start_date: "01/01/2025", end_date: "01/31/2025" }],
      day_types: "All Days|17,Average Weekday|15,Average Weekend Day|67",
      day_parts:
        "All Day|0023,Early AM|0005,Peak AM|0609,Mid-Day|1014,Peak PM|1518,Late PM|1923,Recreation Hours|0819",
      trip_attributes: false,
      "11": "",
      traveler_attributes: false,
      is_ui_enabled: false,
      enable_home_work_locations: false,
      hwl_enable_visitor: false,
      hwl_enable_resident: false,
      hwl_enable_worker: false,
      enable_visualization: false,
      aadt_calibration_year: "",
      tags: "streetlightR",
      segment_types: [],
      enable_15min: false,
      is_massive_queue: false,
      zone_intersection_type: "",
      enable_completion_email: false,
      unit_of_measurement: "miles",
      oz_sets: [{ name: "Street ends" }],
      dz_sets: [{ name: "Gate" }],
    });
    assert.equal(res.status, 201);
    assert.equal(res.statusText, "Created");
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ["name", "status", "uuid", "warnings"]);
    assert.deepEqual(
      [body.name, body.status, body.warnings],
      [name, "success", ['unknown field "11" was ignored']],
    );
  });

  it("tags the analysis (200 OK) and lists the organization's tags", async () => {
    const res = await request("tags/tag_analyses", {
      insight_login_email: EMAIL,
      tags: ["corridor"],
      analyses: [{ name }],
    });
    assert.equal(res.statusText, "OK");
    const { tags } = (await (await request("tags")).json()) as {
      tags: { tag_name: string; analysis_num: number }[];
    };
    assert.deepEqual(
      tags.map((t) => [t.tag_name, t.analysis_num]),
      [
        ["corridor", 1],
        ["streetlightR", 1],
      ],
    );
  });

  let status: { status: string; metrics: string[]; shapefiles?: string[]; uuid: string };

  it("polls the status until Data Available, then reads the coverage review", async () => {
    for (let i = 0; i < 600; i++) {
      const res = await request("analyses/status", { analyses: [{ name }] });
      [status] = ((await res.json()) as { analyses: (typeof status)[] }).analyses;
      if (status.status !== "Processing") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status.status, "Data Available");
    assert.deepEqual(status.metrics, ["od_all", "od_pers", "od_comm", "zone_od_all", "sample_size"]);
    assert.deepEqual(status.shapefiles, ["origin_zones", "destination_zones"]);

    const review = await request(`analyses/${status.uuid}/review_detail`);
    assert.equal(review.status, 200);
    const detail = (await review.json()) as {
      review_status: string;
      zones: { zone_name: string; sample_trips: number; flagged: boolean }[];
    };
    // Origins: 12 trips start in the west, only 2 in the east (under the threshold of 10); the
    // two-way gate sees all 14.
    assert.deepEqual(
      detail.zones.map((z) => [z.zone_name, z.sample_trips, z.flagged]),
      [
        ["Ouest – Condamine", 12, false],
        ["East", 2, true],
        ["Gate", 14, false],
      ],
    );
    assert.equal(detail.review_status, "needs_review");
  });

  it("downloads every metric as CSV", async () => {
    for (const metric of status.metrics) {
      const res = await request(`analyses/download/name/${encodeURIComponent(name)}/${metric}`);
      assert.equal(res.status, 200, metric);
      assert.match(res.headers.get("content-type") ?? "", /^text\/csv/);
      const lines = (await res.text()).trim().split("\n");
      assert.match(lines[0], /^[a-z_]+(,[a-z_]+)+$/, `${metric} starts with its header`);
      // Personal cars only: the commercial metric has its header and no row.
      assert.equal(lines.length > 1, metric !== "od_comm", `${metric} rows`);
    }
  });

  it("downloads the shapefiles as zips a shapefile reader opens, by name and by uuid", async () => {
    const expected = {
      origin_zones: [
        ["Polygon", { id: 1, name: "Ouest – Condamine", direction: "", is_pass: 0, is_bidi: 0 }],
        ["Polygon", { id: 2, name: "East", direction: "", is_pass: 0, is_bidi: 0 }],
      ],
      destination_zones: [["LineString", { id: 3, name: "Gate", direction: 90, is_pass: 1, is_bidi: 1 }]],
    };
    for (const path of [`name/${encodeURIComponent(name)}`, `uuid/${status.uuid}`])
      for (const shapefile of status.shapefiles!) {
        const res = await request(`analyses/download/${path}/${shapefile}`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("content-type"), "application/zip");
        const zip = Buffer.from(await res.arrayBuffer());
        const entries = ["shp", "shx", "dbf", "prj", "cpg"].map((ext) => `${shapefile}.${ext}`);
        for (const entry of entries) assert.ok(zip.includes(Buffer.from(entry)), `${entry} in the zip`);
        const read = await shp(zip);
        const layer = Array.isArray(read) ? read[0] : read;
        const features = layer.features as {
          geometry: { type: string };
          properties: Record<string, unknown>;
        }[];
        assert.deepEqual(
          features.map((f) => [
            f.geometry.type,
            pick(f.properties, ["id", "name", "direction", "is_pass", "is_bidi"]),
          ]),
          expected[shapefile as keyof typeof expected],
        );
      }
  });
});

const pick = (o: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.map((k) => [k, o[k] ?? 0]));
