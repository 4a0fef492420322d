import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { LonLat, RoadClass } from "../../src/engine/network/types.js";
import { makeTestApp, type TestContext } from "../helpers/app.js";
import { seg } from "../helpers/network.js";

let nextNode = 1;
/** A segment at the given lon/lat positions (its own two junctions; 100 m long, for round lengths). */
const segment = (wayId: number, index: number, roadClass: RoadClass, name: string | null, coords: LonLat[]) =>
  seg(
    wayId,
    index,
    nextNode++,
    nextNode++,
    [
      [0, 0],
      [0, 100],
    ],
    {
      roadClass,
      highway: roadClass,
      name,
      coords,
      lengthM: 100,
    },
  );

/**
 * Country zz: "Rue Grimaldi" twice near 7.00 E (one place, two pieces) and once 5 km east (another place);
 * "Boulevard d'Italie" (a secondary); "Rue de l'Église" with an accent; "Impasse des Grimaldi" (word start);
 * an unnamed footway.
 */
const ZZ = [
  segment(1, 0, "residential", "Rue Grimaldi", [
    [7.0, 45.0],
    [7.001, 45.0],
  ]),
  segment(1, 1, "residential", "Rue Grimaldi", [
    [7.001, 45.0],
    [7.002, 45.0],
  ]),
  segment(2, 0, "tertiary", "Rue Grimaldi", [
    [7.06, 45.0],
    [7.061, 45.0],
  ]),
  segment(3, 0, "secondary", "Boulevard d'Italie", [
    [7.01, 45.0],
    [7.01, 45.01],
  ]),
  segment(4, 0, "residential", "Rue de l'Église", [
    [7.02, 45.0],
    [7.02, 45.002],
  ]),
  segment(5, 0, "service", "Impasse des Grimaldi", [
    [7.03, 45.0],
    [7.031, 45.0],
  ]),
  segment(6, 0, "footway", null, [
    [7.04, 45.0],
    [7.041, 45.0],
  ]),
];

describe("GET /api/v2/networks/{country}/places", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
    await ctx.store.network.replaceCountry(
      { country: "zz", source: "hand-built", segmentCount: ZZ.length, importedAt: "2026-01-01T00:00:00Z" },
      ZZ,
    );
  });
  after(() => ctx.app.close());

  const search = (query: string, key: string | null = ctx.orgA.key, country = "zz") =>
    ctx.app.inject({
      method: "GET",
      url: `/api/v2/networks/${country}/places?${query}`,
      headers: key ? { "x-stl-key": key } : {},
    });
  const names = async (query: string) =>
    ((await search(query)).json().places as { name: string }[]).map((p) => p.name);

  it("needs a key", async () => {
    const res = await search("q=rue", null);
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error.code, "unauthorized");
  });

  it("answers places with a point on the road, a bbox and their size", async () => {
    const res = await search("q=italie");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      status: "success",
      total: 1,
      places: [
        {
          name: "Boulevard d'Italie",
          point: [7.01, 45.005],
          bbox: [7.01, 45.0, 7.01, 45.01],
          segment_count: 1,
          length_m: 100,
          road_class: "secondary",
        },
      ],
    });
  });

  it("groups one name into a place per stretch of road", async () => {
    const places = (await search("q=rue%20grimaldi")).json().places;
    assert.equal(places.length, 2);
    // The nearer pieces form one place of two segments; the namesake 5 km away is another.
    const byCount = [...places].sort((a, b) => b.segment_count - a.segment_count);
    assert.equal(byCount[0].segment_count, 2);
    assert.deepEqual(byCount[0].bbox, [7.0, 45.0, 7.002, 45.0]);
    assert.equal(byCount[1].segment_count, 1);
    assert.deepEqual(byCount[1].bbox, [7.06, 45.0, 7.061, 45.0]);
  });

  it("ignores case and diacritics", async () => {
    assert.deepEqual(await names("q=EGLISE"), ["Rue de l'Église"]);
    assert.deepEqual(await names("q=%C3%A9glise"), ["Rue de l'Église"]);
    assert.deepEqual(await names("q=d%27ital"), ["Boulevard d'Italie"]);
  });

  it("ranks exact names, name starts, word starts, all words, then inside a word; main roads first", async () => {
    // Both "Rue …" names start with the query: the tertiary piece, then by class and length.
    assert.deepEqual(await names("q=rue"), ["Rue Grimaldi", "Rue Grimaldi", "Rue de l'Église"]);
    // "Grimaldi" starts a word in all three names: ordered by road class.
    assert.deepEqual(await names("q=grimaldi"), ["Rue Grimaldi", "Rue Grimaldi", "Impasse des Grimaldi"]);
    // An exact name beats a name that merely contains it.
    assert.deepEqual(await names("q=impasse%20des%20grimaldi"), ["Impasse des Grimaldi"]);
    // Every query word starts a word of the name, in any order.
    assert.deepEqual(await names("q=grim%20imp"), ["Impasse des Grimaldi"]);
    // Inside a word: still found.
    assert.deepEqual(await names("q=maldi"), ["Rue Grimaldi", "Rue Grimaldi", "Impasse des Grimaldi"]);
    assert.deepEqual(await names("q=nowhere"), []);
  });

  it("caps the answer at limit and says how many matched", async () => {
    const body = (await search("q=grimaldi&limit=1")).json();
    assert.equal(body.places.length, 1);
    assert.equal(body.total, 3);
  });

  it("rejects a query without letters or digits, a long query and a bad limit with 400", async () => {
    const cases: [string, string, string][] = [
      ["q=", "invalid_query", "q"],
      ["q=%20-%20", "invalid_query", "q"],
      [`q=${"a".repeat(101)}`, "invalid_query", "q"],
      ["q=rue&limit=0", "invalid_limit", "limit"],
      ["q=rue&limit=51", "invalid_limit", "limit"],
      ["q=rue&limit=ten", "invalid_limit", "limit"],
    ];
    for (const [query, code, field] of cases) {
      const res = await search(query);
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json().status, "error", query);
      assert.equal(res.json().error.code, code, query);
      assert.equal(res.json().error.field, field, query);
    }
    const missing = await search("limit=3");
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.field, "q");
  });

  it("answers 404 unknown_country for a country without a network", async () => {
    const res = await search("q=rue", ctx.orgA.key, "xx");
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error.code, "unknown_country");
  });

  it("is documented in the OpenAPI document", async () => {
    const paths = (await ctx.app.inject("/docs/openapi.json")).json().paths;
    const get = paths["/api/v2/networks/{country}/places"]?.get;
    assert.ok(get);
    assert.deepEqual(get.tags, ["networks"]);
  });
});
