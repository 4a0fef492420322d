import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { demoYear } from "../../src/main/bootstrap.js";
import { DEMO_EMAIL } from "../../src/app/accounts.js";
import { TRAVEL_MODES } from "../../src/domain/travel-modes.js";
import { demoKey, startServer, type RunningServer } from "../helpers/server.js";
import { monacoDistricts } from "../helpers/zones.js";

describe("streetflow serve (real process, real HTTP)", () => {
  let server: RunningServer;
  let key: string;
  before(async () => {
    server = await startServer();
    key = demoKey(server.dataDir);
  });
  after(() => server?.stop());

  const post = (path: string, body: unknown) =>
    fetch(`${server.baseUrl}${path}?key=${key}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    });

  it("creates the demo organization and prints its key on first start", () => {
    assert.match(key, /^sf_[A-Za-z0-9_-]{43}$/);
    assert.ok(server.output().includes(key), "the key is printed");
  });

  it("answers echo with the demo key, in the query or in x-stl-key", async () => {
    const viaQuery = await fetch(`${server.baseUrl}/api/v2/debug/echo?key=${key}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ message: "ping" }),
    });
    assert.equal(viaQuery.status, 200);
    assert.deepEqual(await viaQuery.json(), { message: "ping", status: "success" });
    const viaHeader = await fetch(`${server.baseUrl}/api/v2/debug/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-stl-key": key },
      body: JSON.stringify({ message: "pong" }),
    });
    assert.equal(viaHeader.status, 200);
  });

  it("rejects a request without a key with 401 and the error body", async () => {
    const res = await fetch(`${server.baseUrl}/api/v2/debug/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "ping" }),
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { status: string }).status, "error");
  });

  it("has a year of demo trips on the Monaco network behind the data periods", async () => {
    const res = await fetch(`${server.baseUrl}/api/v2/date_ranges/mc/All_Vehicles?key=${key}`);
    assert.equal(res.status, 200);
    const { from, to } = demoYear();
    const body = (await res.json()) as {
      date_ranges: { supports: { start_date: string; end_date: string }[] };
    };
    const [fy, fm] = from.split("-");
    assert.equal(body.date_ranges.supports.length, 1);
    assert.equal(body.date_ranges.supports[0].start_date, `${fm}/01/${fy}`);
    assert.ok(body.date_ranges.supports[0].end_date.startsWith(to.slice(5, 7)));
  });

  it("has demo data in every travel mode, over the whole demo year", async () => {
    const { from, to } = demoYear();
    const [fy, fm] = from.split("-");
    for (const mode of Object.keys(TRAVEL_MODES)) {
      const res = await fetch(`${server.baseUrl}/api/v2/date_ranges/mc/${mode}?key=${key}`);
      const { date_ranges } = (await res.json()) as {
        date_ranges: { supports: { start_date: string; end_date: string }[] };
      };
      assert.equal(date_ranges.supports.length, 1, mode);
      assert.equal(date_ranges.supports[0].start_date, `${fm}/01/${fy}`, mode);
      assert.ok(date_ranges.supports[0].end_date.startsWith(to.slice(5, 7)), mode);
    }
  });

  it("runs an OD analysis between two drawn zones to Data Available and serves its CSV", async () => {
    const zoneSet = await post("/api/v2/zone_sets", {
      insight_login_email: DEMO_EMAIL,
      zone_set_name: "Districts",
      zones: {
        type: "FeatureCollection",
        features: monacoDistricts(),
      },
    });
    assert.equal(zoneSet.status, 201);
    const { to } = demoYear();
    const [y, m] = to.split("-").map(Number);
    const lastDay = new Date(Date.UTC(y, m, 0)).getUTCDate();
    const created = await post("/api/v2/analyses", {
      insight_login_email: DEMO_EMAIL,
      analysis_name: "Districts OD",
      analysis_type: "OD_Analysis",
      travel_mode_type: "All_Vehicles",
      output_type: "index",
      oz_sets: [{ name: "Districts" }],
      dz_sets: [{ name: "Districts" }],
      date_ranges: [
        {
          start_date: `${String(m).padStart(2, "0")}/01/${y}`,
          end_date: `${String(m).padStart(2, "0")}/${lastDay}/${y}`,
        },
      ],
    });
    assert.equal(created.status, 201);
    const { uuid } = (await created.json()) as { uuid: string };
    let status = "";
    for (let i = 0; i < 120 && status !== "Data Available"; i++) {
      const res = await post("/api/v2/analyses/status", { analyses: [{ uuid }] });
      status = ((await res.json()) as { analyses: { status: string }[] }).analyses[0].status;
      if (status !== "Data Available") await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(status, "Data Available");
    const csv = await fetch(
      `${server.baseUrl}/api/v2/analyses/download/name/Districts%20OD/od_all?key=${key}`,
    );
    assert.equal(csv.status, 200);
    const lines = (await csv.text()).trim().split("\n");
    assert.ok(lines[0].startsWith("device_type,origin_zone_id,origin_zone_name"));
    assert.ok(lines.length > 1, "the simulated month has trips between the districts");
    assert.ok(lines.slice(1).some((l) => l.includes(",0: Average Day (M-Su),0: All Day (12am-12am),")));
  });

  it("serves segment counts computed from the matched trips", async () => {
    const { to } = demoYear();
    const res = await fetch(`${server.baseUrl}/counts/v1/metrics`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-key": key },
      body: JSON.stringify({
        geometry: {
          radius: {
            point: { type: "point", coordinates: [7.4246, 43.7384] },
            geom_mode: "intersects",
            buffer: 0.3,
            unit: "km",
          },
        },
        fields: ["segment_id", "year_month", "trips_volume"],
        country: "mc",
        mode: "vehicle",
        day_part: "all",
        day_type: "all",
        direction: "bidirectional",
        date: { year: Number(to.slice(0, 4)) },
        data_version: 1,
      }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      columns: string[];
      data: [number, string, number][];
      status: string;
    };
    assert.deepEqual(body.columns, ["segment_id", "year_month", "trips_volume"]);
    assert.equal(body.status, "done");
    assert.ok(body.data.length > 0);
    assert.ok(body.data.some(([, , volume]) => volume > 0));
  });

  it("serves the OpenAPI document and its UI", async () => {
    const doc = (await (await fetch(`${server.baseUrl}/docs/openapi.json`)).json()) as { openapi: string };
    assert.equal(doc.openapi, "3.0.3");
    assert.equal((await fetch(`${server.baseUrl}/docs`, { redirect: "manual" })).status < 400, true);
  });
});
