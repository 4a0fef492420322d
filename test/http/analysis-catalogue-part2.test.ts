import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { catalogueSuite, finished } from "../helpers/catalogue-scenario.js";

/**
 * OD_MF_Analysis, Segment_Analysis and AADT on the hand-counted street week (catalogue-scenario.ts):
 * 7 cars east Monday 07:00 (10 min), 2 heavy trucks east Saturday noon (20 min), 1 car west Tuesday
 * 08:30 (6 min); 9 devices in January, so a trip stands for 10,000 / 9 = 1,111.1.
 */
describe("the analysis catalogue over HTTP: OD_MF_Analysis, Segment_Analysis, AADT", () => {
  const { ctx, base, create, download: csv } = catalogueSuite();
  const download = async (uuid: string, metric: string) => (await csv(uuid, metric)).split("\n");
  const run = async (body: Record<string, unknown>) => {
    const res = await create(body);
    assert.equal(res.statusCode, 201, res.body);
    const { uuid } = res.json();
    const done = await finished(ctx(), uuid);
    assert.equal(done.status, "Data Available");
    return { uuid, metrics: done.metrics };
  };
  const day = "0: Average Day (M-Su),0: All Day (12am-12am)";

  it("runs OD_MF_Analysis: origin, then the middle filter, then the destination", async () => {
    const { uuid, metrics } = await run(
      base({ analysis_type: "OD_MF_Analysis", mf_sets: [{ name: "Middle" }], dz_sets: [{ name: "Street" }] }),
    );
    assert.deepEqual(metrics, ["od_mf_all", "od_mf_pers", "od_mf_comm", "zone_od_mf_all", "sample_size"]);
    // West → Centre → East: the 9 eastbound trips (9 × 1,111.1 / 7 days = 1,429; (70 + 40) / 9 = 12 min);
    // East → Centre → West: the one westbound car (159). All 10 pass Centre (1,587).
    assert.deepEqual(await download(uuid, "od_mf_all"), [
      "device_type,origin_zone_id,origin_zone_name,origin_zone_is_pass_through,origin_zone_direction," +
        "middle_filter_zone_id,middle_filter_zone_name,middle_filter_zone_direction," +
        "destination_zone_id,destination_zone_name,destination_zone_is_pass_through,destination_zone_direction," +
        "day_type,day_part,o_m_d_traffic,origin_zone_traffic,middle_filter_zone_traffic," +
        "destination_zone_traffic,avg_trip_duration",
      `All Vehicles,1,West,no,N/A,3,Centre,N/A,2,East,no,N/A,${day},1429,1429,1587,1429,12`,
      `All Vehicles,2,East,no,N/A,3,Centre,N/A,1,West,no,N/A,${day},159,159,1587,159,6`,
      "",
    ]);
    // The trucks alone: 2 × 1,111.1 / 7 = 317, 20 min.
    assert.equal(
      (await download(uuid, "od_mf_comm"))[1],
      `Commercial,1,West,no,N/A,3,Centre,N/A,2,East,no,N/A,${day},317,317,317,317,20`,
    );
    assert.deepEqual((await download(uuid, "zone_od_mf_all")).slice(1), [
      `All Vehicles,Origin,1,West,no,N/A,${day},1429`,
      `All Vehicles,Origin,2,East,no,N/A,${day},159`,
      `All Vehicles,Middle Filter,3,Centre,yes,N/A,${day},1587`,
      `All Vehicles,Destination,1,West,no,N/A,${day},159`,
      `All Vehicles,Destination,2,East,no,N/A,${day},1429`,
      "",
    ]);
  });

  it("adds OD_MF trip attributes per triple", async () => {
    const { uuid, metrics } = await run(
      base({
        analysis_name: "MF attributes",
        analysis_type: "OD_MF_Analysis",
        mf_sets: [{ name: "Middle" }],
        dz_sets: [{ name: "Street" }],
        trip_attributes: true,
        trip_duration_bins: "0-15,15+",
      }),
    );
    assert.ok(metrics.includes("od_mf_trip_duration"), metrics.join());
    // West → Centre → East: 7 cars of 10 min and 2 trucks of 20 min, equally weighted.
    assert.deepEqual((await download(uuid, "od_mf_trip_duration")).slice(0, 2), [
      "device_type,origin_zone_id,origin_zone_name,origin_zone_is_pass_through,origin_zone_direction," +
        "middle_filter_zone_id,middle_filter_zone_name,middle_filter_zone_direction," +
        "destination_zone_id,destination_zone_name,destination_zone_is_pass_through,destination_zone_direction," +
        "day_type,day_part,trip_duration_0_15,trip_duration_15_plus",
      `All Vehicles,1,West,no,N/A,3,Centre,N/A,2,East,no,N/A,${day},0.778,0.222`,
    ]);
  });

  it("runs Segment_Analysis on an OSM way, a drawn line and the residential segments of a polygon", async () => {
    const { uuid, metrics } = await run(
      base({
        analysis_type: "Segment_Analysis",
        oz_sets: [{ name: "Way 1" }, { name: "Gate" }, { name: "Block" }],
        segment_types: ["Residential"],
        unit_of_measurement: "km",
        enable_speed_percentile: true,
        speed_percentile_bins: "5,50,95",
        trip_attributes: true,
        trip_speed_bins: "0-1,1-2,2+",
      }),
    );
    assert.deepEqual(metrics, [
      "sa_all",
      "sa_pers",
      "sa_comm",
      "sa_trip_duration",
      "sa_trip_length",
      "sa_trip_speed",
      "sa_trip_circuity",
      "sample_size",
    ]);
    // Every trip runs the whole street: 10 × 1,111.1 / 7 = 1,587 on every segment. Each 100 m piece takes a
    // third of the trip, but a trip travels only 90 m of its first and last piece (it starts and ends 10 m
    // from the street's ends). The middle piece (the gate's, 10001): 100 m in 200 s, cars east 1.8 km/h (7),
    // trucks 0.9 (2), the car west 3.0 (1); mean 1.74; nearest-rank p5 0.9, p50 1.8, p95 3.0. An end piece
    // (10000, 10002): 90 m, cars 1.62, trucks 0.81, the car west 2.7; mean 1.566; p5 0.8, p50 1.6, p95 2.7.
    // The way: 280 m over the whole trip, cars 1.68, trucks 0.84, the car west 2.8; mean 1.624; p5 0.8,
    // p50 1.7, p95 2.8. Trips last (70 + 40 + 6) / 10 = 11.6 min and are 280 m long.
    const row = (speeds: string) => `${day},1587,${speeds},12,0.28`;
    const [middle, end] = [row("1.7,0.9,1.8,3"), row("1.6,0.8,1.6,2.7")];
    assert.deepEqual(await download(uuid, "sa_all"), [
      "device_type,zone_id,zone_name,segment_id,osm_id,segment_name,road_class,zone_direction,day_type,day_part," +
        "average_daily_segment_traffic,avg_segment_speed_kph,segment_speed_kph_p5,segment_speed_kph_p50," +
        "segment_speed_kph_p95,avg_trip_duration,avg_trip_length",
      `All Vehicles,1,Way 1,1,1,Way 1,residential,N/A,${row("1.6,0.8,1.7,2.8")}`,
      `All Vehicles,4,Gate,4,1,Gate,residential,N/A,${middle}`,
      `All Vehicles,5,Block,10000,1,Way 1,residential,N/A,${end}`,
      `All Vehicles,5,Block,10001,1,Way 1,residential,N/A,${middle}`,
      `All Vehicles,5,Block,10002,1,Way 1,residential,N/A,${end}`,
      "",
    ]);
    // The trucks alone on the way: 280 m in 20 min, 0.84 km/h.
    assert.equal(
      (await download(uuid, "sa_comm"))[1],
      `Commercial,1,Way 1,1,1,Way 1,residential,N/A,${day},317,0.8,0.8,0.8,0.8,20,0.28`,
    );
    // Whole-trip speed: 0.28 km in 10 min = 1.68 km/h (cars east), 0.84 (trucks), 2.8 (car west).
    assert.equal(
      (await download(uuid, "sa_trip_speed"))[1],
      `All Vehicles,1,Way 1,1,1,Way 1,residential,N/A,${day},0.2,0.7,0.1`,
    );
  });

  it("fails a Segment_Analysis whose polygons hold no road of the segment_types, refuses volume output", async () => {
    const res = await create(
      base({
        analysis_name: "Motorways",
        analysis_type: "Segment_Analysis",
        oz_sets: [{ name: "Block" }],
        segment_types: ["Motorway"],
      }),
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await finished(ctx(), res.json().uuid)).status, "Failed");
    const volume = await create(
      base({ analysis_type: "Segment_Analysis", oz_sets: [{ name: "Block" }], output_type: "volume" }),
    );
    assert.equal(volume.statusCode, 400);
    assert.equal(volume.json().error.field, "output_type");
  });

  it("runs AADT: the year's average day by month and weekday, with its factors", async () => {
    const { uuid, metrics } = await run(
      base({
        analysis_type: "AADT",
        oz_sets: [{ name: "Gate" }],
        az_sets: [{ name: "Middle" }],
        aadt_year: 2025,
      }),
    );
    assert.deepEqual(metrics, ["aadt_all", "aadt_factors_all", "sample_size"]);
    // 2025 has 3 days with data: Monday 6 Jan (7 cars, 7,777.8), Tuesday 7 (1 car, 1,111.1), Saturday 11
    // (2 trucks, 2,222.2). January's average day is the mean of its weekdays': 11,111.1 / 3 = 3,704; the
    // year has only January. Personal: (7,777.8 + 1,111.1 + 0) / 3 = 2,963; commercial 2,222.2 / 3 = 741.
    assert.deepEqual(await download(uuid, "aadt_all"), [
      "zone_id,zone_name,zone_is_pass_through,zone_direction,year,days_with_data,aadt,aadt_personal," +
        "aadt_commercial,calibrated",
      "4,Gate,yes,N/A,2025,3,3704,2963,741,no",
      "",
    ]);
    // AADT ÷ each period's average day: Monday 3,704 / 7,778 = 0.476, Tuesday 3.333, Saturday 1.667.
    assert.deepEqual(await download(uuid, "aadt_factors_all"), [
      "zone_id,zone_name,factor_type,period,average_daily_traffic,factor",
      "4,Gate,month,2025-01,3704,1",
      "4,Gate,day_of_week,M,7778,0.476",
      "4,Gate,day_of_week,Tu,1111,3.333",
      "4,Gate,day_of_week,Sa,2222,1.667",
      "",
    ]);
  });

  it("calibrates AADT with the counted AADT of a reference zone, per group by its traffic ratios", async () => {
    const { uuid } = await run(
      base({
        analysis_name: "Calibrated AADT",
        analysis_type: "AADT",
        oz_sets: [{ name: "Gate" }],
        az_sets: [{ name: "Counted" }],
        aadt_year: "2025",
      }),
    );
    // The count station sees the same 10 trips (estimate 3,704) and counts 7,407: twice as many. Its 80 %
    // personal (5,926) and 20 % commercial (1,481) scale those groups the same way.
    assert.equal((await download(uuid, "aadt_all"))[1], "4,Gate,yes,N/A,2025,3,7407,5926,1481,yes");
  });

  it("refuses AADT without aadt_year, without az_sets, or on zone sets with no pass-through zone", async () => {
    const noYear = await create(
      base({ analysis_type: "AADT", oz_sets: [{ name: "Gate" }], az_sets: [{ name: "Middle" }] }),
    );
    assert.equal(noYear.json().error.field, "aadt_year");
    const noSets = await create(
      base({ analysis_type: "AADT", oz_sets: [{ name: "Gate" }], aadt_year: 2025 }),
    );
    assert.equal(noSets.json().error.field, "az_sets");
    const plain = await create(
      base({ analysis_type: "AADT", az_sets: [{ name: "Middle" }], aadt_year: 2025 }),
    );
    assert.equal(plain.statusCode, 400);
    assert.equal(plain.json().error.field, "oz_sets");
  });

  it("refuses an OD_MF_Analysis whose middle filters are not pass-through, or without mf_sets", async () => {
    const plain = await create(
      base({ analysis_type: "OD_MF_Analysis", mf_sets: [{ name: "Street" }], dz_sets: [{ name: "Street" }] }),
    );
    assert.equal(plain.statusCode, 400);
    assert.equal(plain.json().error.field, "mf_sets");
    const missing = await create(base({ analysis_type: "OD_MF_Analysis", dz_sets: [{ name: "Street" }] }));
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.field, "mf_sets");
  });
});
