import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { catalogueSuite, finished } from "../helpers/catalogue-scenario.js";

describe("the analysis catalogue over HTTP", () => {
  const { ctx: app, base, create, download } = catalogueSuite();

  it("runs OD_Preset_Geography to Data Available with origins in zones and destinations in quarters", async () => {
    const res = await create(base({ analysis_type: "OD_Preset_Geography", geography_type: "admin_10" }));
    assert.equal(res.statusCode, 201, res.body);
    const { uuid } = res.json();
    const done = await finished(app(), uuid);
    assert.equal(done.status, "Data Available");
    assert.deepEqual(done.metrics, ["od_all", "od_pers", "od_comm", "zone_od_all", "sample_size"]);
    const rows = (await download(uuid, "od_all")).split("\n");
    // 9 devices in January: a trip stands for 10,000 / 9. West → East Quarter: 9 trips over 7 days
    // (10,000 / 7 = 1,429); East → West Quarter: one (1,111 / 7 = 159).
    const day = "0: Average Day (M-Su),0: All Day (12am-12am)";
    assert.deepEqual(rows.slice(1), [
      `All Vehicles,1,West,no,N/A,502,East Quarter,no,N/A,${day},1429,1429,1429,12`,
      `All Vehicles,2,East,no,N/A,501,West Quarter,no,N/A,${day},159,159,159,6`,
      "",
    ]);
    const detail = await app().app.inject({
      method: "GET",
      url: `/api/v2/analyses/${uuid}?key=${app().orgA.key}`,
    });
    assert.equal(detail.json().analysis.geography_type, "admin_10");
  });

  it("answers an unknown geography_type with a 400 listing the country's valid ones", async () => {
    const res = await create(
      base({ analysis_type: "OD_Preset_Geography", geography_type: "taz", country: "mc" }),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.field, "geography_type");
    assert.match(res.json().error.message, /valid: admin_10/);
  });

  it("runs Zone_Activity_Analysis: trips starting or ending in each zone, per day", async () => {
    const res = await create(base({ analysis_type: "zone_activity_analysis" }));
    assert.equal(res.statusCode, 201, res.body);
    const { uuid } = res.json();
    const done = await finished(app(), uuid);
    assert.equal(done.status, "Data Available");
    assert.deepEqual(done.metrics, ["za_all", "za_pers", "za_comm", "sample_size"]);
    const day = "0: Average Day (M-Su),0: All Day (12am-12am)";
    // Every trip runs between West and East, so each zone sees all 10 trips: 10 × 10,000 / 9 over
    // 7 days = 1,587; durations (7 × 10 + 2 × 20 + 6) / 10 = 12 min; 280 m = 0.17 miles.
    assert.deepEqual((await download(uuid, "za_all")).split("\n"), [
      "device_type,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part," +
        "average_daily_zone_traffic,avg_trip_duration,avg_trip_length",
      `All Vehicles,1,West,no,N/A,${day},1587,12,0.17`,
      `All Vehicles,2,East,no,N/A,${day},1587,12,0.17`,
      "",
    ]);
    // Personal: the 8 cars (8 × 1,111 / 7 = 1,270; (70 + 6) / 8 = 9.5 → 10 min); commercial: the 2 trucks.
    assert.equal(
      (await download(uuid, "za_pers")).split("\n")[1],
      `Personal,1,West,no,N/A,${day},1270,10,0.17`,
    );
    assert.equal(
      (await download(uuid, "za_comm")).split("\n")[1],
      `Commercial,1,West,no,N/A,${day},317,20,0.17`,
    );
  });

  it("refuses zone sets Zone_Activity_Analysis does not take", async () => {
    const res = await create(
      base({ analysis_type: "Zone_Activity_Analysis", dz_sets: [{ name: "Street" }] }),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.field, "dz_sets");
  });
});
