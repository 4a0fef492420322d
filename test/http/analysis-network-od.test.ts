import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { catalogueApp, catalogueSuite, finished, zoneSetOf } from "../helpers/catalogue-scenario.js";
import { at } from "../helpers/network.js";

/**
 * Network_OD on the hand-counted street week (catalogue-scenario.ts): 7 cars east Monday 07:00 (10 min),
 * 2 heavy trucks east Saturday noon (20 min), 1 car west Tuesday 08:30 (6 min), each running the whole
 * 300 m street; a trip stands for 10,000 / 9 = 1,111.1. "Ends" holds two line zones, one along the
 * west segment (x 0..100) and one along the east segment (x 200..300).
 */
describe("Network_OD over HTTP: between the first and the last road segment a trip travels", () => {
  const {
    ctx,
    base,
    create,
    download: csv,
  } = catalogueSuite(
    { analysis_type: "Network_OD", oz_sets: [{ name: "Ends" }], dz_sets: [{ name: "Ends" }] },
    async () => {
      const app = await catalogueApp();
      const line = (name: string, id: number, x0: number, x1: number) => ({
        type: "Feature",
        properties: { name, id },
        geometry: { type: "LineString", coordinates: [at(x0, 0), at(x1, 0)] },
      });
      await zoneSetOf(app.ctx, "Ends", [line("West end", 7, 30, 70), line("East end", 8, 230, 270)]);
      return app;
    },
  );
  const download = async (uuid: string, metric: string) => (await csv(uuid, metric)).split("\n");
  const day = "0: Average Day (M-Su),0: All Day (12am-12am)";

  it("pairs each trip's first origin segment with its last destination segment", async () => {
    const res = await create(base({}));
    assert.equal(res.statusCode, 201, res.body);
    const { uuid } = res.json();
    const done = await finished(ctx(), uuid);
    assert.equal(done.status, "Data Available");
    assert.deepEqual(done.metrics, ["od_all", "od_pers", "od_comm", "sample_size"]);
    // East: 9 trips (9 × 1,111.1 / 7 days = 1,429), entering the west segment at the start and leaving the
    // east one at the end: (7 × 10 + 2 × 20) / 9 = 12 min. West: the one car (159), 6 min.
    assert.deepEqual(await download(uuid, "od_all"), [
      "device_type,origin_zone_id,origin_zone_name,origin_zone_is_pass_through,origin_zone_direction," +
        "destination_zone_id,destination_zone_name,destination_zone_is_pass_through,destination_zone_direction," +
        "day_type,day_part,o_d_traffic,origin_zone_traffic,destination_zone_traffic,avg_trip_duration",
      `All Vehicles,7,West end,yes,N/A,8,East end,yes,N/A,${day},1429,1429,1429,12`,
      `All Vehicles,8,East end,yes,N/A,7,West end,yes,N/A,${day},159,159,159,6`,
      "",
    ]);
    // The trucks alone: 2 × 1,111.1 / 7 = 317, 20 min.
    assert.deepEqual((await download(uuid, "od_comm")).slice(1), [
      `Commercial,7,West end,yes,N/A,8,East end,yes,N/A,${day},317,317,317,20`,
      "",
    ]);
  });

  it("counts trips rather than daily averages with trip_counts", async () => {
    const res = await create(base({ analysis_name: "Network counts", output_type: "trip_counts" }));
    const done = await finished(ctx(), res.json().uuid);
    // 9 × 1,111.1 = 10,000 east, 1,111 west.
    assert.deepEqual(
      (await download(res.json().uuid, "od_all")).slice(1, 3).map((l) => l.split(",").slice(-4).join(",")),
      ["10000,10000,10000,12", "1111,1111,1111,6"],
    );
    assert.equal(done.status, "Data Available");
  });

  it("runs Network_Performance per segment and hour of entering it", async () => {
    const res = await create(
      base({
        analysis_name: "Performance",
        analysis_type: "Network_Performance",
        oz_sets: [{ name: "Way 1" }],
        dz_sets: undefined,
        unit_of_measurement: "km",
      }),
    );
    assert.equal(res.statusCode, 201, res.body);
    const done = await finished(ctx(), res.json().uuid);
    assert.equal(done.status, "Data Available");
    assert.deepEqual(done.metrics, ["np_all", "np_pers", "np_comm", "sample_size"]);
    // The way takes the whole trip, which runs 280 m of its 300 (x 10 to 290: the first and last segments
    // only from the origin and to the destination): cars east 600 s (0.467 m/s, 1.7 km/h) entering at
    // 07:00, the car west 360 s (2.8) at 08:30, the trucks 1,200 s (0.8) at noon. No trip runs at night: no
    // free-flow speed, so no travel time index nor delay (see test/unit/network-performance.test.ts).
    // Traffic per day: each trip of the street week weighs as in Network_OD (9 trips → 1,429 a day).
    const row = (period: string, kph: number, seconds: number, perDay: number, sample: number) =>
      `All Vehicles,1,Way 1,1,1,Way 1,residential,N/A,0: Average Day (M-Su),${period},` +
      `${Array(6).fill(kph).join(",")},N/A,${seconds},N/A,N/A,${perDay},${sample}`;
    assert.deepEqual(await download(res.json().uuid, "np_all"), [
      "device_type,zone_id,zone_name,segment_id,osm_id,segment_name,road_class,zone_direction,day_type,period," +
        "avg_speed_kph,speed_kph_p5,speed_kph_p15,speed_kph_p50,speed_kph_p85,speed_kph_p95,free_flow_speed_kph," +
        "avg_travel_time_sec,travel_time_index,vehicle_hours_of_delay,average_daily_segment_traffic,sample_size",
      row("07:00-08:00", 1.7, 600, 1111, 7),
      row("08:00-09:00", 2.8, 360, 159, 1),
      row("12:00-13:00", 0.8, 1200, 317, 2),
      "",
    ]);
    const quarters = await create(
      base({
        analysis_name: "Performance 15",
        analysis_type: "Network_Performance",
        oz_sets: [{ name: "Way 1" }],
        dz_sets: undefined,
        enable_15min: true,
      }),
    );
    await finished(ctx(), quarters.json().uuid);
    const periods = (await download(quarters.json().uuid, "np_all")).slice(1, -1).map((l) => l.split(",")[9]);
    assert.deepEqual(periods, ["07:00-07:15", "08:30-08:45", "12:00-12:15"]);
  });

  it("reports only the speed or the travel-time figures with metric_type", async () => {
    const performance = (name: string, metricType: string) =>
      create(
        base({
          analysis_name: name,
          analysis_type: "Network_Performance",
          oz_sets: [{ name: "Way 1" }],
          dz_sets: undefined,
          unit_of_measurement: "km",
          metric_type: metricType,
        }),
      );
    const identity =
      "device_type,zone_id,zone_name,segment_id,osm_id,segment_name,road_class,zone_direction,day_type,period";
    const cars = "All Vehicles,1,Way 1,1,1,Way 1,residential,N/A,0: Average Day (M-Su),07:00-08:00";
    // The same figures as the full np_all above (cars east at 07:00: 1.7 km/h, 600 s, 1,111 a day, 7 trips).
    const speed = await performance("Performance speed", "Speed");
    assert.equal(speed.statusCode, 201, speed.body);
    await finished(ctx(), speed.json().uuid);
    const speedCsv = await download(speed.json().uuid, "np_all");
    assert.equal(
      speedCsv[0],
      `${identity},avg_speed_kph,speed_kph_p5,speed_kph_p15,speed_kph_p50,speed_kph_p85,speed_kph_p95,` +
        "free_flow_speed_kph,average_daily_segment_traffic,sample_size",
    );
    assert.equal(speedCsv[1], `${cars},1.7,1.7,1.7,1.7,1.7,1.7,N/A,1111,7`);
    const detail = await ctx().app.inject({
      method: "GET",
      url: `/api/v2/analyses/${speed.json().uuid}?key=${ctx().orgA.key}`,
    });
    assert.equal(detail.json().analysis.metric_type, "speed");

    const travel = await performance("Performance time", "travel_time");
    assert.equal(travel.statusCode, 201, travel.body);
    await finished(ctx(), travel.json().uuid);
    const travelCsv = await download(travel.json().uuid, "np_all");
    assert.equal(
      travelCsv[0],
      `${identity},avg_travel_time_sec,travel_time_index,vehicle_hours_of_delay,average_daily_segment_traffic,sample_size`,
    );
    assert.equal(travelCsv[1], `${cars},600,N/A,N/A,1111,7`);

    const unknown = await performance("Performance bad", "delay");
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().error.code, "validation_failed");
    assert.equal(unknown.json().error.field, "metric_type");
    assert.match(unknown.json().error.message, /metric_type: must be one of all, speed, travel_time/);
  });

  it("refuses polygon zones and a missing dz_sets", async () => {
    const polygons = await create(base({ oz_sets: [{ name: "Street" }] }));
    assert.equal(polygons.statusCode, 400);
    assert.equal(polygons.json().error.field, "oz_sets");
    const missing = await create(base({ dz_sets: undefined }));
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.field, "dz_sets");
  });
});
