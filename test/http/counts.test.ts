import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import Fastify, { type FastifyInstance } from "fastify";
import type { TSchema } from "typebox";
import { buildApp } from "../../src/api/app.js";
import { metricsFromAggregates } from "../../src/app/counts/metrics.js";
import { type MetricsQuery } from "../../src/engine/counts/metrics.js";
import { storeNetworks } from "../../src/app/networks.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { SegmentStatCell } from "../../src/engine/counts/segment-stats.js";
import { makeOrg, type TestOrg } from "../helpers/app.js";
import { at } from "../helpers/network.js";
import { colSeg, FOOTWAY, gridNetwork, MOTORWAY, rowSeg } from "../helpers/counts.js";
import { GeometryResponse, MetricsResponse } from "../../src/api/counts/schemas.js";

/** The bytes Fastify's schema serializer (fast-json-stringify) writes for `answer` under `schema`. */
async function schemaSerialized(schema: TSchema, answer: unknown): Promise<string> {
  const plain = Fastify();
  plain.get("/", { schema: { response: { 200: schema } } }, async () => answer);
  try {
    return (await plain.inject({ method: "GET", url: "/" })).body;
  } finally {
    await plain.close();
  }
}

describe("counts interface /counts/v1", () => {
  let app: FastifyInstance;
  let store: SqliteStore;
  let orgA: TestOrg;
  let orgB: TestOrg;
  const clock = { now: new Date("2026-03-10T12:00:00Z") };
  const providerCalls: MetricsQuery[] = [];

  before(async () => {
    store = new SqliteStore(":memory:");
    const networks = storeNetworks(store.network);
    const aggregates = metricsFromAggregates(store.segmentStats);
    app = await buildApp({
      store,
      networks,
      counts: {
        geometryPageSize: 5,
        metricsPageSize: 2,
        now: () => clock.now,
        metricsProvider: (q) => {
          providerCalls.push(q);
          return aggregates(q);
        },
      },
    });
    orgA = await makeOrg(store, "Org A");
    orgB = await makeOrg(store, "Org B");
    const info = { country: "mc", source: "test", segmentCount: 0, importedAt: new Date().toISOString() };
    await store.network.replaceCountry(info, gridNetwork());
  });
  after(() => app.close());

  const post = (path: string, payload: object, key = orgA.key) =>
    app.inject({ method: "POST", url: `/counts/v1/${path}`, headers: { "x-service-key": key }, payload });
  const get = (url: string, key = orgA.key) =>
    app.inject({ method: "GET", url, headers: { "x-service-key": key } });
  const point = (x: number, y: number) => ({ type: "point", coordinates: at(x, y) });
  const body = (geometry: object, extra: object = {}) => ({
    geometry,
    country: "mc",
    mode: "vehicle",
    ...extra,
  });
  const idsOf = async (geometry: object, extra: object = {}) => {
    const res = await post("segmentcount", body(geometry, extra));
    assert.equal(res.statusCode, 200, res.body);
    const geo = await post("geometry", body(geometry, extra));
    assert.equal(geo.statusCode, 200, geo.body);
    const ids = await allPages(geo.json(), "geometry");
    assert.equal(res.json().segment_count, ids.length);
    return ids.map((row) => row[0] as number);
  };
  /** Follows next_url to the end and returns every row. */
  async function allPages(first: { data: unknown[][]; paging: { next_url: string } | null }, _kind: string) {
    const rows = [...first.data];
    let paging = first.paging;
    while (paging) {
      const res = await get(paging.next_url);
      assert.equal(res.statusCode, 200, res.body);
      rows.push(...res.json().data);
      paging = res.json().paging;
    }
    return rows;
  }
  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

  // Segments 100 m around the node at (200, 200): the four meeting there, and twelve more ending 100 m away.
  const NEAR_CENTRE = [rowSeg(200, 1), rowSeg(200, 2), colSeg(200, 1), colSeg(200, 2)];
  const ONE_BLOCK_OUT = [
    ...[rowSeg(200, 0), colSeg(100, 1), colSeg(100, 2)],
    ...[rowSeg(200, 3), colSeg(300, 1), colSeg(300, 2)],
    ...[colSeg(200, 0), rowSeg(100, 1), rowSeg(100, 2)],
    ...[colSeg(200, 3), rowSeg(300, 1), rowSeg(300, 2)],
  ];

  describe("authentication", () => {
    it("answers 401 without a key, with an unknown key, or with the key only as query parameter", async () => {
      const payload = body({ segment_ids: [rowSeg(0, 0)] });
      for (const headers of [{}, { "x-service-key": "sf_nope" }]) {
        const res = await app.inject({ method: "POST", url: "/counts/v1/segmentcount", headers, payload });
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().error.code, "unauthorized");
      }
      const query = await app.inject({ method: "GET", url: `/counts/v1/usage?key=${orgA.key}` });
      assert.equal(query.statusCode, 401);
    });

    it("accepts the key in x-stl-key as well", async () => {
      const res = await app.inject({
        method: "GET",
        url: "/counts/v1/usage",
        headers: { "x-stl-key": orgB.key },
      });
      assert.equal(res.statusCode, 200);
    });
  });

  describe("GET /date_ranges/{country}/{travel_mode}", () => {
    before(async () => {
      const day = (d: string, vehicleClass: string) => ({
        day: d,
        vehicleClass,
        source: "lbs",
        trips: 4,
        devices: 2,
      });
      await store.tripStats.addDayCounts("mc", [
        day("2024-11-03", "personal"),
        day("2025-01-15", "personal"),
        day("2025-02-01", "heavy_commercial"),
        day("2025-03-09", "bicycle"),
      ]);
    });

    it("lists months and years with trips of the mode's vehicle classes", async () => {
      const res = await get("/counts/v1/date_ranges/mc/vehicle");
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        months: [
          { month: 11, year: 2024 },
          { month: 1, year: 2025 },
          { month: 2, year: 2025 },
        ],
        years: [{ year: 2024 }, { year: 2025 }],
        status: "done",
      });
      const truck = await get("/counts/v1/date_ranges/MC/Truck");
      assert.deepEqual(truck.json().months, [{ month: 2, year: 2025 }]);
      const bike = await get("/counts/v1/date_ranges/mc/bike");
      assert.deepEqual(bike.json().years, [{ year: 2025 }]);
      const ped = await get("/counts/v1/date_ranges/mc/ped");
      assert.deepEqual(ped.json(), { months: [], years: [], status: "done" });
    });

    it("answers 404 for an unknown country and 400 for an unknown mode", async () => {
      const country = await get("/counts/v1/date_ranges/xx/vehicle");
      assert.equal(country.statusCode, 404);
      assert.equal(country.json().error.code, "unknown_country");
      const mode = await get("/counts/v1/date_ranges/mc/hovercraft");
      assert.equal(mode.statusCode, 400);
      assert.equal(mode.json().error.field, "travel_mode");
      assert.match(mode.json().error.message, /vehicle, truck, bike, ped/);
    });
  });

  describe("selectors", () => {
    it("nearest: the k segments closest to the point, measured to the line, closest first", async () => {
      // 30 m from the column at x = 100, 35 m from the primary row at y = 200, then farther.
      const ids = await idsOf({ nearest: { point: point(130, 235), number_segments: 2 } });
      assert.deepEqual(ids, [colSeg(100, 2), rowSeg(200, 1)]);
      const one = await idsOf({
        nearest: { point: { type: "Point", coordinates: at(1050, 10) }, number_segments: 1 },
      });
      assert.deepEqual(one, [MOTORWAY]);
    });

    it("nearest respects the travel mode: only pedestrians get the footway", async () => {
      const near = { nearest: { point: point(100, 100), number_segments: 1 } };
      assert.deepEqual(
        await idsOf({ nearest: { point: point(60, 55), number_segments: 1 } }, { mode: "ped" }),
        [FOOTWAY],
      );
      assert.notDeepEqual(await idsOf(near, { mode: "vehicle" }), [FOOTWAY]);
      const veh = await idsOf({ nearest: { point: point(60, 55), number_segments: 1 } });
      assert.notEqual(veh[0], FOOTWAY);
    });

    it("radius intersects: any part within the circle, closest first; within: the whole line", async () => {
      const centre = point(200, 200);
      const intersects = await idsOf({
        radius: { point: centre, geom_mode: "intersects", buffer: 110, unit: "m" },
      });
      assert.deepEqual(sorted(intersects.slice(0, 4)), sorted(NEAR_CENTRE));
      assert.deepEqual(sorted(intersects), sorted([...NEAR_CENTRE, ...ONE_BLOCK_OUT]));
      const within = await idsOf({
        radius: { point: centre, geom_mode: "within", buffer: 0.11, unit: "km" },
      });
      assert.deepEqual(sorted(within), sorted(NEAR_CENTRE));
    });

    it("radius converts miles, feet and the distance/distance_unit variant (default intersects)", async () => {
      const centre = point(200, 200);
      const all = sorted([...NEAR_CENTRE, ...ONE_BLOCK_OUT]);
      assert.deepEqual(sorted(await idsOf({ radius: { point: centre, buffer: 0.07, unit: "mile" } })), all);
      assert.deepEqual(sorted(await idsOf({ radius: { point: centre, buffer: 361, unit: "ft" } })), all);
      assert.deepEqual(
        sorted(await idsOf({ radius: { point: centre, distance: 110, distance_unit: "meters" } })),
        all,
      );
      // 0.05 mi = 80 m: only the four segments meeting at the centre reach into it.
      const small = await idsOf({ radius: { point: centre, geom_mode: "within", buffer: 0.05, unit: "mi" } });
      assert.deepEqual(small, []);
      const touching = await idsOf({ radius: { point: centre, buffer: 0.05, unit: "miles" } });
      assert.deepEqual(sorted(touching), sorted(NEAR_CENTRE));
      // Pedestrians also get the footway, 71 m from the centre.
      const ped = await idsOf({ radius: { point: centre, buffer: 110, unit: "m" } }, { mode: "ped" });
      assert.deepEqual(sorted(ped), sorted([...all, FOOTWAY]));
    });

    it("polygon: intersects (default) and within, Polygon and MultiPolygon", async () => {
      const square = (x0: number, y0: number, x1: number, y1: number) => [
        [at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1), at(x0, y0)],
      ];
      const inner = [100, 200, 300].flatMap((k) => [rowSeg(k, 1), rowSeg(k, 2), colSeg(k, 1), colSeg(k, 2)]);
      const poly = { type: "Polygon", coordinates: square(90, 90, 310, 310) };
      const within = await idsOf({ polygon: { ...poly, geom_mode: "within" } });
      assert.deepEqual(within, sorted(inner));
      const outerPieces = [100, 200, 300].flatMap((k) => [
        rowSeg(k, 0),
        rowSeg(k, 3),
        colSeg(k, 0),
        colSeg(k, 3),
      ]);
      assert.deepEqual(await idsOf({ polygon: poly }), sorted([...inner, ...outerPieces]));
      // A small box in the middle of a block meets nothing; one over the centre meets the four lines through it.
      const multi = {
        type: "multipolygon",
        coordinates: [square(40, 340, 60, 360), square(190, 190, 210, 210)],
      };
      assert.deepEqual(await idsOf({ polygon: multi }), sorted(NEAR_CENTRE));
      // A long thin box crossing the column at x = 300 between nodes: no vertex inside, edges cross.
      const crossing = { type: "Polygon", coordinates: square(290, 140, 310, 160) };
      assert.deepEqual(await idsOf({ polygon: crossing }), [colSeg(300, 1)]);
    });

    it("segment_ids: in request order without repeats; unknown ids are a 400 listing them", async () => {
      const ids = [colSeg(300, 1), rowSeg(0, 0), colSeg(300, 1), MOTORWAY];
      assert.deepEqual(await idsOf({ segment_ids: ids }), [colSeg(300, 1), rowSeg(0, 0), MOTORWAY]);
      const res = await post("geometry", body({ segment_ids: [rowSeg(0, 0), 123, 456] }));
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, "unknown_segment_ids");
      assert.match(res.json().error.message, /123, 456/);
      // Known but not travelled by the mode: silently left out.
      assert.deepEqual(await idsOf({ segment_ids: [FOOTWAY, MOTORWAY] }), [MOTORWAY]);
    });

    it("roadway_classification include/exclude filters by road class", async () => {
      const radius = { radius: { point: point(200, 200), buffer: 110, unit: "m" } };
      const primary = await idsOf(radius, { roadway_classification: { include: ["primary"] } });
      assert.deepEqual(
        sorted(primary),
        [0, 1, 2, 3].map((i) => rowSeg(200, i)),
      );
      const both = await idsOf(radius, { roadway_classification: { include: ["Primary", "secondary"] } });
      assert.equal(both.length, 8);
      const notResidential = await idsOf(radius, { roadway_classification: { exclude: ["residential"] } });
      assert.deepEqual(sorted(notResidential), sorted(both));
      const res = await post(
        "segmentcount",
        body(radius, { roadway_classification: { include: ["highway"] } }),
      );
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, "unknown_road_class");
      assert.match(res.json().error.message, /"highway".*motorway, trunk, primary/);
    });

    it("geometry answers segment ids with their LineString", async () => {
      const res = await post("geometry", body({ segment_ids: [rowSeg(0, 0)] }));
      assert.deepEqual(res.json().columns, ["segment_id", "line_geometry"]);
      assert.deepEqual(res.json().data, [
        [rowSeg(0, 0), { type: "LineString", coordinates: [at(0, 0), at(100, 0)] }],
      ]);
      assert.equal(res.json().paging, null);
      assert.equal(res.json().query_rows, 1);
      assert.equal(res.json().status, "done");
      assert.match(res.json().request_id, /^[0-9a-f-]{36}$/);
    });
  });

  describe("bad requests", () => {
    const expect400 = async (payload: object, field: string | RegExp, path = "segmentcount") => {
      const res = await post(path, payload);
      assert.equal(res.statusCode, 400, res.body);
      const error = res.json().error;
      assert.equal(res.json().status, "error");
      if (typeof field === "string") assert.equal(error.field, field, error.message);
      else assert.match(error.field, field);
      assert.ok(error.message.length > 10);
      assert.doesNotMatch(res.body, /at .*\.ts/);
    };
    const near = { nearest: { point: point(0, 0), number_segments: 3 } };

    it("missing geometry, two selectors, no selector, unknown selector", async () => {
      await expect400({ country: "mc", mode: "vehicle" }, "geometry");
      await expect400(body({ ...near, segment_ids: [1] }), "geometry");
      await expect400(body({}), "geometry");
      await expect400(body({ bbox: [1, 2, 3, 4] }), "geometry.bbox");
    });

    it("wrong types and out-of-range values name the field", async () => {
      await expect400(
        body({ nearest: { point: point(0, 0), number_segments: "3" } }),
        "geometry.nearest.number_segments",
      );
      await expect400(
        body({ nearest: { point: point(0, 0), number_segments: 5000 } }),
        "geometry.nearest.number_segments",
      );
      await expect400(
        body({ nearest: { point: { type: "line", coordinates: [7, 43] }, number_segments: 1 } }),
        "geometry.nearest.point.type",
      );
      await expect400(
        body({ nearest: { point: { type: "point", coordinates: [181, 43] }, number_segments: 1 } }),
        "geometry.nearest.point.coordinates",
      );
      await expect400(
        body({ nearest: { point: { type: "point", coordinates: [7, -91] }, number_segments: 1 } }),
        "geometry.nearest.point.coordinates",
      );
      await expect400(
        body({ radius: { point: point(0, 0), buffer: 1, unit: "furlong" } }),
        "geometry.radius.unit",
      );
      await expect400(
        body({ radius: { point: point(0, 0), buffer: 100, unit: "km" } }),
        "geometry.radius.buffer",
      );
      await expect400(
        body({ radius: { point: point(0, 0), buffer: 1, unit: "km", geom_mode: "touches" } }),
        "geometry.radius.geom_mode",
      );
      await expect400(
        body({
          polygon: {
            type: "Polygon",
            coordinates: [
              [
                [7, 43],
                [7, 44],
                [200, 44],
                [7, 43],
              ],
            ],
          },
        }),
        "geometry.polygon.coordinates[0][2]",
      );
      await expect400(body({ polygon: { type: "LineString", coordinates: [] } }), "geometry.polygon.type");
      await expect400(body({ segment_ids: ["a"] }), /^geometry\.segment_ids/);
      await expect400({ ...body(near), mode: "plane" }, "mode");
      await expect400({ ...body(near), country: 7 }, "country");
    });

    it("answers 404 for a country without a network", async () => {
      const res = await post("geometry", { ...body(near), country: "xx" });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, "unknown_country");
    });
  });

  describe("POST /metrics, paging and metering", () => {
    const A = rowSeg(200, 1);
    const B = colSeg(200, 1);
    const C = rowSeg(0, 0);
    const cell = (c: Partial<SegmentStatCell> & Pick<SegmentStatCell, "segmentId" | "month" | "trips">) => ({
      dayOfWeek: 1,
      hour: 8,
      direction: "with" as const,
      vehicleClass: "personal",
      source: "lbs",
      speedSumKph: 0,
      speedCount: 0,
      speedHistogram: [],
      purposes: {},
      incomes: {},
      ...c,
    });
    before(async () => {
      const speeds = (n: number, kph: number) => {
        const speedHistogram: number[] = [];
        speedHistogram[kph / 5] = n;
        return { speedSumKph: n * kph, speedCount: n, speedHistogram };
      };
      await store.segmentStats.add("mc", [
        cell({
          segmentId: A,
          month: "2025-01",
          trips: 62,
          ...speeds(62, 40),
          purposes: { hbw: 40, hbo: 22 },
        }),
        cell({ segmentId: A, month: "2025-01", trips: 0, incomes: { "1": 31, "2": 31 } }),
        cell({
          segmentId: A,
          month: "2025-01",
          dayOfWeek: 6,
          hour: 17,
          direction: "against",
          source: "telematics",
          trips: 31,
          ...speeds(31, 60),
        }),
        cell({ segmentId: A, month: "2025-01", dayOfWeek: 3, vehicleClass: "heavy_commercial", trips: 31 }),
        cell({ segmentId: B, month: "2025-02", dayOfWeek: 2, hour: 12, trips: 56, ...speeds(56, 30) }),
        cell({ segmentId: B, month: "2025-03", dayOfWeek: 2, hour: 12, trips: 31 }),
        cell({ segmentId: B, month: "2025-03", dayOfWeek: 2, hour: 12, vehicleClass: "bicycle", trips: 10 }),
      ]);
      // Another country's aggregates never leak in: C has data only there.
      await store.segmentStats.add("zz", [cell({ segmentId: C, month: "2025-01", trips: 99 })]);
    });

    const metrics = (over: object = {}, key = orgA.key) =>
      post(
        "metrics",
        {
          geometry: { segment_ids: [B, A, C] },
          country: "mc",
          mode: "vehicle",
          fields: ["segment_id", "year_month", "trips_volume", "trips_sample_count"],
          day_part: "all",
          day_type: "all",
          direction: "bidirectional",
          date: { year: 2025 },
          data_version: 1,
          ...over,
        },
        key,
      );

    it("answers one row per segment and month with data, in selection order, paged", async () => {
      const res = await metrics({ data_version: 3 });
      assert.equal(res.statusCode, 200, res.body);
      const first = res.json();
      assert.deepEqual(first.columns, ["segment_id", "year_month", "trips_volume", "trips_sample_count"]);
      // B: 56 trips over February's 28 days, 31 over March's 31; A: 62 + 31 + 31 over January's 31.
      assert.deepEqual(first.data, [
        [B, "2025-02-01", 2, 56],
        [B, "2025-03-01", 1, 31],
      ]);
      assert.equal(first.data_version, 3);
      assert.equal(first.query_rows, 2);
      assert.equal(first.status, "done");
      assert.deepEqual(first.paging, {
        next_url: `/counts/v1/metrics/paging/${first.request_id}?page=2`,
        request_id: first.request_id,
        page: 2,
        page_size: 2,
        total_rows: 3,
        total_pages: 2,
      });
      const second = await get(first.paging.next_url);
      assert.equal(second.statusCode, 200);
      assert.deepEqual(second.json(), {
        columns: first.columns,
        data: [[A, "2025-01-01", 4, 124]],
        data_version: 3,
        paging: null,
        query_rows: 1,
        request_id: first.request_id,
        status: "done",
      });
      const again = await get(`/counts/v1/metrics/paging/${first.request_id}?page=1`);
      assert.deepEqual(again.json().data, first.data);
    });

    it("applies day type, day part, direction, source and month; computes every metric", async () => {
      const res = await metrics({
        geometry: { segment_ids: [A] },
        fields: [
          "trips_volume",
          "avg_speed",
          "free_flow_speed",
          "vmt",
          "trip_purpose",
          "income",
          "road_class",
          "segment_length",
        ],
        date: { year: 2025, month: 1 },
        day_type: "weekday",
        day_part: 2,
        direction: "with",
        source: "lbs_plus",
      });
      assert.equal(res.statusCode, 200, res.body);
      // 62 personal + 31 truck trips over January 2025's 23 weekdays; speeds all 40 km/h (bin 40-45).
      assert.deepEqual(res.json().data, [
        [4, 24.9, 27.5, 0.25, { hbo: 0.355, hbw: 0.645 }, { "1": 0.5, "2": 0.5 }, "primary", 0.0621],
      ]);
    });

    it("filters by source, direction, day type and part, and the mode's vehicle classes", async () => {
      const fields = ["segment_id", "trips_volume", "avg_speed"];
      const saturdays = await metrics({
        fields,
        geometry: { segment_ids: [A] },
        source: "agps",
        direction: "against",
        day_type: "Saturday",
        day_part: "4",
      });
      // 31 trips over January 2025's four Saturdays; 60 km/h.
      assert.deepEqual(saturdays.json().data, [[A, 8, 37.3]]);
      const trucks = await metrics({ fields, mode: "truck" });
      assert.deepEqual(trucks.json().data, [[A, 1, null]]);
      const midDay = await metrics({ fields, geometry: { segment_ids: [A] }, day_part: 3 });
      assert.deepEqual(midDay.json().data, []);
      assert.equal(midDay.json().query_rows, 0);
      assert.equal(midDay.json().paging, null);
      const bikes = await metrics({ fields: ["segment_id", "trips_sample_count"], mode: "bike" });
      assert.deepEqual(bikes.json().data, [[B, 10]]);
    });

    it("rejects bad metrics parameters with a 400 naming the field", async () => {
      const cases: [object, string, RegExp?][] = [
        [{ fields: [] }, "fields"],
        [{ fields: ["segment_id", "colour"] }, "fields", /"colour".*segment_id, year_month, trips_volume/],
        [{ fields: ["segment_id", "segment_id"] }, "fields"],
        [{ day_part: 9 }, "day_part", /0 All Day.*5 Late PM/],
        [{ day_part: "evening" }, "day_part"],
        [{ day_type: "holiday" }, "day_type"],
        [{ direction: "north" }, "direction"],
        [{ date: { year: 2025, month: 13 } }, "date.month"],
        [{ date: { month: 1 } }, "date.year"],
        [{ source: "gps" }, "source"],
        [{ data_version: "1" }, "data_version"],
        [{ fields: undefined }, "fields"],
        [{ colour: "red" }, "colour"],
      ];
      for (const [over, field, message] of cases) {
        const res = await metrics(over);
        assert.equal(res.statusCode, 400, JSON.stringify(over));
        assert.equal(res.json().error.field, field, res.body);
        if (message) assert.match(res.json().error.message, message);
      }
    });

    it("segment count accepts the metrics body unchanged and counts segments with or without data", async () => {
      const res = await post("segmentcount", {
        geometry: { segment_ids: [B, A, C] },
        country: "mc",
        mode: "vehicle",
        fields: ["segment_id"],
        date: { year: 2025 },
        data_version: 1,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().segment_count, 3);
    });

    it("meters metrics calls per key (segments × fields), not paging or other endpoints", async () => {
      const org = await makeOrg(store, "Metered");
      await metrics({}, org.key); // 3 segments × 4 fields, paged
      const paged = await metrics({}, org.key);
      await get(paged.json().paging.next_url, org.key);
      await metrics({ geometry: { segment_ids: [A] }, fields: ["segment_id"] }, org.key); // 1 × 1
      await post("geometry", body({ segment_ids: [A, B] }), org.key);
      const res = await get("/counts/v1/usage", org.key);
      assert.equal(res.statusCode, 200);
      const [keyRecord] = await store.accounts.listKeys(org.orgId);
      assert.deepEqual(res.json(), {
        period: { start: "2026-03-01T00:00:00.000Z", end: "2026-04-01T00:00:00.000Z" },
        keys: [
          {
            key_id: keyRecord.id,
            prefix: keyRecord.prefix,
            label: null,
            calls: 3,
            segments: 7,
            fields: 9,
            units: 25,
            quota_units: null,
          },
        ],
        status: "done",
      });
      const february = await get("/counts/v1/usage?month=2026-02", org.key);
      assert.equal(february.json().keys[0].calls, 0);
    });

    it("refuses a call over the key's quota with 429 before computing anything", async () => {
      const org = await makeOrg(store, "Quota");
      const [keyRecord] = await store.accounts.listKeys(org.orgId);
      assert.equal(await store.usage.setQuota(keyRecord.id, 10), keyRecord.id);
      const calls = providerCalls.length;
      const over = await metrics({}, org.key); // 12 units
      assert.equal(over.statusCode, 429);
      assert.equal(over.json().error.code, "quota_exceeded");
      assert.equal(providerCalls.length, calls);
      const two = { geometry: { segment_ids: [A, B] } };
      assert.equal((await metrics(two, org.key)).statusCode, 200); // 8 units
      assert.equal(
        (await metrics({ ...two, fields: ["segment_id", "road_class"] }, org.key)).statusCode,
        429,
      ); // 8 + 4
      assert.equal((await metrics({ ...two, fields: ["segment_id"] }, org.key)).statusCode, 200); // 10
      const exhausted = await metrics({ geometry: { segment_ids: [A] }, fields: ["segment_id"] }, org.key);
      assert.equal(exhausted.statusCode, 429);
      assert.equal(providerCalls.length, calls + 2);
      const usage = await get("/counts/v1/usage", org.key);
      assert.equal(usage.json().keys[0].units, 10);
      assert.equal(usage.json().keys[0].quota_units, 10);
    });

    it("paging ids are private to the organization, kind-specific and expire after 24 h", async () => {
      const first = (await metrics()).json();
      const url = first.paging.next_url;
      assert.equal((await get(url)).statusCode, 200);
      assert.equal((await get(url, orgB.key)).statusCode, 404);
      const unknown = await get(`/counts/v1/metrics/paging/${crypto.randomUUID()}?page=2`);
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().error.code, "unknown_request_id");
      assert.equal((await get(`/counts/v1/geometry/paging/${first.request_id}?page=2`)).statusCode, 404);
      assert.equal((await get(`/counts/v1/metrics/paging/${first.request_id}?page=3`)).statusCode, 400);
      assert.equal((await get(`/counts/v1/metrics/paging/${first.request_id}?page=x`)).statusCode, 400);
      assert.equal((await get(`/counts/v1/metrics/paging/${first.request_id}`)).statusCode, 200);
      const saved = clock.now;
      clock.now = new Date(saved.getTime() + 24 * 3_600_000 + 1);
      try {
        assert.equal((await get(url)).statusCode, 404);
      } finally {
        clock.now = saved;
      }
    });

    it("writes every answer byte for byte as the response schema's serializer would", async () => {
      const first = await metrics();
      const every = await metrics({
        geometry: { segment_ids: [A, B] },
        fields: ["segment_id", "year_month", "trips_volume", "avg_speed", "free_flow_speed", "vmt"],
        date: { year: 2025, month: 3 },
      });
      const details = await metrics({
        geometry: { segment_ids: [A] },
        fields: ["vmt", "avg_speed", "trip_purpose", "income", "road_class", "segment_length"],
      });
      const later = await get(first.json().paging.next_url);
      for (const res of [first, every, details, later]) {
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.body, await schemaSerialized(MetricsResponse, res.json()));
      }
      const geometry = await post(
        "geometry",
        body({ radius: { point: point(200, 200), buffer: 250, unit: "m" } }),
      );
      const page = await get(geometry.json().paging.next_url);
      for (const res of [geometry, page])
        assert.equal(res.body, await schemaSerialized(GeometryResponse, res.json()));
    });

    it("geometry paging walks every selected segment exactly once", async () => {
      const res = await post(
        "geometry",
        body({ radius: { point: point(200, 200), buffer: 250, unit: "m" } }),
      );
      const first = res.json();
      assert.equal(first.data.length, 5);
      assert.equal(first.paging.page_size, 5);
      const rows = await allPages(first, "geometry");
      const ids = rows.map((r) => r[0] as number);
      assert.equal(first.paging.total_rows, ids.length);
      assert.equal(new Set(ids).size, ids.length);
      const count = await post(
        "segmentcount",
        body({ radius: { point: point(200, 200), buffer: 250, unit: "m" } }),
      );
      assert.equal(count.json().segment_count, ids.length);
      assert.ok(ids.length > 20);
    });
  });
});
