import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { seg } from "../helpers/network.js";

describe("GET /api/v2/date_ranges/{country}/{travel_mode}", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
    const info = { country: "mc", source: "test", segmentCount: 1, importedAt: new Date().toISOString() };
    await ctx.store.network.replaceCountry(info, [
      seg(1, 0, 1, 2, [
        [0, 0],
        [100, 0],
      ]),
    ]);
    await ctx.store.network.replaceCountry({ ...info, country: "zz" }, [
      seg(2, 0, 1, 2, [
        [0, 0],
        [100, 0],
      ]),
    ]);
    const day = (d: string, vehicleClass: string, source = "lbs") => ({
      day: d,
      vehicleClass,
      source,
      trips: 3,
      devices: 2,
    });
    // Personal trips in 14 months (holes in March 2024 and 2025); trucks only in January 2025.
    const months = ["2024-01", "2024-02", "2024-04", "2024-05", "2024-06", "2024-07", "2024-08", "2024-09"];
    months.push("2024-10", "2024-11", "2024-12", "2025-01", "2025-02", "2025-04");
    await ctx.store.tripStats.addDayCounts("mc", [
      ...months.map((m) => day(`${m}-15`, "personal")),
      day("2025-01-03", "heavy_commercial"),
      // Connected cars in June 2024 only; bus riders in February 2025, rail riders in March 2024
      // (a month without road trips).
      day("2024-06-20", "personal", "telematics"),
      day("2025-02-11", "bus"),
      day("2024-03-12", "rail"),
    ]);
  });
  after(() => ctx.app.close());

  const get = (path: string, key = ctx.orgA.key) =>
    ctx.app.inject({ method: "GET", url: `/api/v2/date_ranges/${path}?key=${key}` });

  it("folds months with trips into whole-month periods; default is the latest 12 months", async () => {
    const res = await get("mc/All_Vehicles");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      date_ranges: {
        supports: [
          { start_date: "01/01/2024", end_date: "02/29/2024" },
          { start_date: "04/01/2024", end_date: "02/28/2025" },
          { start_date: "04/01/2025", end_date: "04/30/2025" },
        ],
        default: [
          { start_date: "04/01/2024", end_date: "02/28/2025" },
          { start_date: "04/01/2025", end_date: "04/30/2025" },
        ],
      },
    });
  });

  it("matches the travel mode case-insensitively and filters by its vehicle classes", async () => {
    const res = await get("MC/truck");
    assert.equal(res.statusCode, 200);
    const periods = [{ start_date: "01/01/2025", end_date: "01/31/2025" }];
    assert.deepEqual(res.json(), { date_ranges: { supports: periods, default: periods } });
  });

  it("answers each mode's own months: riders by class, LBS_Plus and CVD_Plus by trace source", async () => {
    const supports = async (mode: string) => (await get(`mc/${mode}`)).json().date_ranges.supports;
    const month = (start: string, end: string) => [{ start_date: start, end_date: end }];
    assert.deepEqual(await supports("Bus"), month("02/01/2025", "02/28/2025"));
    assert.deepEqual(await supports("rail"), month("03/01/2024", "03/31/2024"));
    assert.deepEqual(await supports("All_Vehicles_CVD_Plus"), month("06/01/2024", "06/30/2024"));
    assert.deepEqual(await supports("All_Vehicles_LBS_Plus"), await supports("All_Vehicles"));
    assert.deepEqual(await supports("All_Vehicles_By_Weight"), await supports("All_Vehicles"));
    assert.deepEqual(await supports("Bicycle"), []);
  });

  it("answers empty periods for a country with a network but no trips", async () => {
    const res = await get("zz/Pedestrian");
    assert.deepEqual(res.json(), { date_ranges: { supports: [], default: [] } });
  });

  it("answers 404 for an unknown country or travel mode", async () => {
    const country = await get("xx/Truck");
    assert.equal(country.statusCode, 404);
    assert.equal(country.json().error.code, "unknown_country");
    const mode = await get("mc/Hovercraft");
    assert.equal(mode.statusCode, 404);
    assert.match(
      mode.json().error.message,
      /All_Vehicles, All_Vehicles_LBS_Plus, All_Vehicles_CVD_Plus, All_Vehicles_By_Weight, Personal, Truck, Bus, Rail, Bicycle, Pedestrian/,
    );
  });

  it("requires a key", async () => {
    assert.equal((await get("mc/Truck", "")).statusCode, 401);
  });
});
