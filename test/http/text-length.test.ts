import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { charCount, truncateChars } from "../../src/domain/text-length.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { odRequest, seedAnalysisData } from "../helpers/analyses.js";

/** 25 emoji and 25 letters: 50 characters, 75 UTF-16 code units. */
const FIFTY = "🚲".repeat(25) + "a".repeat(25);
const FIFTY_ONE = FIFTY + "b";

const square = (lon: number) => ({
  type: "Polygon",
  coordinates: [
    [
      [lon, 48.1],
      [lon + 0.01, 48.1],
      [lon + 0.01, 48.11],
      [lon, 48.11],
      [lon, 48.1],
    ],
  ],
});

describe("length limits count characters (code points), not UTF-16 units", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
    await seedAnalysisData(ctx.store, ctx.orgA.orgId);
  });
  after(() => ctx.app.close());

  const zoneSet = (setName: string, zoneName: string) =>
    ctx.app.inject({
      method: "POST",
      url: `/api/v2/zone_sets?key=${ctx.orgA.key}`,
      payload: {
        zone_set_name: setName,
        insight_login_email: ctx.orgA.email,
        zones: {
          type: "FeatureCollection",
          features: [{ type: "Feature", geometry: square(11.5), properties: { name: zoneName } }],
        },
      },
    });
  const analysis = (name: string) =>
    ctx.app.inject({
      method: "POST",
      url: `/api/v2/analyses?key=${ctx.orgA.key}`,
      payload: odRequest(ctx.orgA.email, { analysis_name: name }),
    });

  it("counts an emoji once", () => {
    assert.equal(FIFTY.length, 75);
    assert.equal(charCount(FIFTY), 50);
    assert.equal(truncateChars("🚲🚲🚲", 2), "🚲🚲");
  });

  it("accepts a 50-character zone set name and zone name, and refuses 51", async () => {
    const ok = await zoneSet(FIFTY, FIFTY);
    assert.equal(ok.statusCode, 201, ok.body);
    const longSet = await zoneSet(FIFTY_ONE, "zone");
    assert.equal(longSet.statusCode, 400);
    assert.equal(longSet.json().error.field, "zone_set_name");
    const longZone = await zoneSet("another", FIFTY_ONE);
    assert.equal(longZone.statusCode, 400);
    assert.match(longZone.json().error.field, /properties\.name$/);
  });

  it("accepts a 50-character analysis name and refuses 51", async () => {
    const ok = await analysis(FIFTY);
    assert.equal(ok.statusCode, 201, ok.body);
    const long = await analysis(FIFTY_ONE);
    assert.equal(long.statusCode, 400);
    assert.equal(long.json().error.field, "analysis_name");
  });
});
