import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { circleBbox, circleRing } from "../../src/web/client/views/counts/geo.js";
import { collectPages, type PagedAnswer } from "../../src/web/client/views/counts/paging.js";
import {
  MAP_FIELDS,
  RADIUS_M,
  clampRadius,
  metricsBody,
  monthValue,
  monthlyBody,
  quotaUnits,
  recordsOf,
  requestKey,
  selectionBody,
  type CountsQuery,
} from "../../src/web/client/views/counts/query.js";
import {
  VOLUME_COLOURS,
  classOf,
  legendEntries,
  niceCeil,
  styleOf,
  volumeBreaks,
} from "../../src/web/client/views/counts/scale.js";
import { drawnSegments, segmentRows } from "../../src/web/client/views/counts/result.js";
import { nextSort, sortRows, type SegmentRow } from "../../src/web/client/views/counts/sort.js";

const query: CountsQuery = {
  country: "mc",
  mode: "vehicle",
  month: "2026-06",
  dayType: "weekday",
  dayPart: 2,
  direction: "with",
  point: [7.4201234567, 43.7351234567],
  radiusM: 300,
};

describe("counts requests", () => {
  it("builds the metrics body of a month around a point", () => {
    assert.deepEqual(metricsBody(query), {
      geometry: {
        radius: {
          point: { type: "point", coordinates: [7.420123, 43.735123] },
          geom_mode: "intersects",
          buffer: 300,
          unit: "m",
        },
      },
      country: "mc",
      mode: "vehicle",
      fields: ["segment_id", "trips_volume", "vmt", "avg_speed", "road_class"],
      day_part: 2,
      day_type: "weekday",
      direction: "with",
      data_version: 1,
      date: { year: 2026, month: 6 },
    });
  });

  it("shares the selection between geometry, segment count and metrics", () => {
    const { geometry, country, mode } = metricsBody(query);
    assert.deepEqual(selectionBody(query), { geometry, country, mode });
  });

  it("asks a segment's year by id", () => {
    const body = monthlyBody(query, 1234_0001, 2025);
    assert.deepEqual(body.geometry, { segment_ids: [12340001] });
    assert.deepEqual(body.date, { year: 2025 });
    assert.deepEqual(body.fields, ["year_month", "trips_volume", "avg_speed"]);
    assert.equal(body.direction, "with");
  });

  it("keys the cache by path and body, so only a repeated question is answered from it", () => {
    assert.equal(
      requestKey("/counts/v1/metrics", metricsBody(query)),
      requestKey("/counts/v1/metrics", metricsBody({ ...query })),
    );
    assert.notEqual(
      requestKey("/counts/v1/metrics", metricsBody(query)),
      requestKey("/counts/v1/metrics", metricsBody({ ...query, radiusM: 325 })),
    );
  });

  it("counts quota units as segments × fields", () => {
    assert.equal(quotaUnits(226, MAP_FIELDS.length), 1130);
  });

  it("keeps the radius within bounds", () => {
    assert.equal(clampRadius(1), RADIUS_M.min);
    assert.equal(clampRadius(99_999), RADIUS_M.max);
    assert.equal(clampRadius(412.6), 413);
    assert.equal(clampRadius(NaN), RADIUS_M.initial);
  });

  it("turns rows into records and months into select values", () => {
    assert.deepEqual(
      recordsOf(
        ["a", "b"],
        [
          [1, "x"],
          [2, null],
        ],
      ),
      [
        { a: 1, b: "x" },
        { a: 2, b: null },
      ],
    );
    assert.equal(monthValue({ year: 2026, month: 3 }), "2026-03");
  });
});

describe("counts paging", () => {
  const page = (data: number[], next: number | null, total = 3): PagedAnswer => ({
    columns: ["segment_id"],
    data: data.map((d) => [d]),
    paging:
      next === null
        ? null
        : {
            next_url: `/counts/v1/metrics/paging/r1?page=${next}`,
            request_id: "r1",
            page: next,
            page_size: 2,
            total_rows: 5,
            total_pages: total,
          },
  });

  it("follows next_url until a page has no paging", async () => {
    const asked: string[] = [];
    const later: Record<string, PagedAnswer> = {
      "/counts/v1/metrics/paging/r1?page=2": page([3, 4], 3),
      "/counts/v1/metrics/paging/r1?page=3": page([5], null),
    };
    const all = await collectPages(page([1, 2], 2), async (url) => {
      asked.push(url);
      return later[url];
    });
    assert.deepEqual(all.data, [[1], [2], [3], [4], [5]]);
    assert.equal(all.paging, null);
    assert.deepEqual(asked, Object.keys(later));
  });

  it("answers a one-page result without another request", async () => {
    const all = await collectPages(page([1], null), () => assert.fail("no page to fetch"));
    assert.deepEqual(all.data, [[1]]);
  });

  it("stops when the pages run past total_pages", async () => {
    await assert.rejects(
      collectPages(page([1], 2, 2), async () => page([2], 3, 2)),
      /past page 2/,
    );
  });
});

describe("volume scale", () => {
  it("rounds breaks up to readable numbers", () => {
    assert.deepEqual([0.4, 1, 37, 140, 210, 999, 1001].map(niceCeil), [1, 1, 40, 150, 250, 1000, 1200]);
  });

  it("puts quantile breaks between the smallest and the largest value, strictly increasing", () => {
    const values = Array.from({ length: 100 }, (_, i) => i * 10);
    const breaks = volumeBreaks(values);
    assert.equal(breaks.length, VOLUME_COLOURS.length - 1);
    assert.ok(breaks.every((b, i) => i === 0 || b > breaks[i - 1]));
    assert.ok(breaks[0] > 0 && breaks.at(-1)! <= 990);
    // Every class holds some values.
    const counts = new Array(breaks.length + 1).fill(0);
    for (const v of values) counts[classOf(v, breaks)]++;
    assert.ok(
      counts.every((c) => c > 0),
      String(counts),
    );
  });

  it("has one class when all values are equal, and none from no values", () => {
    assert.deepEqual(volumeBreaks([24, 24, 24]), []);
    assert.deepEqual(volumeBreaks([]), []);
    assert.equal(classOf(24, []), 0);
  });

  it("labels the legend and keeps the darkest colour for the top class", () => {
    assert.deepEqual(
      legendEntries([100, 250]).map((e) => e.label),
      ["< 100", "100 – 249", "≥ 250"],
    );
    assert.equal(styleOf(2, 3).colour, VOLUME_COLOURS.at(-1));
    assert.equal(styleOf(0, 3).colour, VOLUME_COLOURS[0]);
    assert.deepEqual(
      legendEntries([]).map((e) => e.label),
      ["all shown segments"],
    );
  });
});

describe("segments table order", () => {
  const row = (id: number, name: string | null, volume: number, speed: number | null): SegmentRow => ({
    segment_id: id,
    name,
    road_class: "primary",
    trips_volume: volume,
    vmt: volume / 10,
    avg_speed: speed,
  });
  const rows = [row(3, "B", 10, 20), row(1, "A", 30, null), row(2, null, 30, 25)];

  it("sorts numbers with ties by id, missing speeds last either way", () => {
    const ids = (key: "trips_volume" | "avg_speed", descending: boolean) =>
      sortRows(rows, { key, descending }).map((r) => r.segment_id);
    assert.deepEqual(ids("trips_volume", true), [1, 2, 3]);
    assert.deepEqual(ids("trips_volume", false), [3, 1, 2]);
    assert.deepEqual(ids("avg_speed", true), [2, 3, 1]);
    assert.deepEqual(ids("avg_speed", false), [3, 2, 1]);
  });

  it("sorts names alphabetically, unnamed last", () => {
    assert.deepEqual(
      sortRows(rows, { key: "name", descending: false }).map((r) => r.segment_id),
      [1, 3, 2],
    );
  });

  it("flips the sorted column, starts others descending (names ascending)", () => {
    assert.deepEqual(nextSort({ key: "vmt", descending: true }, "vmt"), { key: "vmt", descending: false });
    assert.deepEqual(nextSort({ key: "vmt", descending: true }, "avg_speed"), {
      key: "avg_speed",
      descending: true,
    });
    assert.deepEqual(nextSort({ key: "vmt", descending: true }, "name"), { key: "name", descending: false });
  });
});

describe("search circle", () => {
  it("is a closed ring about the radius away from the centre", () => {
    const ring = circleRing([7.42, 43.73], 500, 16);
    assert.equal(ring.length, 17);
    assert.deepEqual(ring[0], ring[16]);
    const [w, s, e, n] = circleBbox([7.42, 43.73], 500);
    // 500 m is about 0.0045° of latitude and 0.0062° of longitude at 43.7° N.
    assert.ok(Math.abs(n - 43.73 - 0.0045) < 0.0001 && Math.abs(43.73 - s - 0.0045) < 0.0001);
    assert.ok(Math.abs(e - 7.42 - 0.0062) < 0.0002 && Math.abs(7.42 - w - 0.0062) < 0.0002);
  });
});

describe("counts result on the map and in the table", () => {
  const result = {
    metrics: [
      { segment_id: 1, trips_volume: 500, vmt: 12.5, avg_speed: 30.1, road_class: "primary" },
      { segment_id: 2, trips_volume: 20, vmt: 0.4, avg_speed: null, road_class: "residential" },
    ],
    lines: new Map<number, [number, number][]>([
      [
        1,
        [
          [7, 43],
          [7.001, 43],
        ],
      ],
      [
        2,
        [
          [7, 43.001],
          [7.001, 43.001],
        ],
      ],
      [
        3,
        [
          [7, 43.002],
          [7.001, 43.002],
        ],
      ],
    ]),
  };
  const roads = new Map([
    [1, { name: "Rue A", road_class: "primary" }],
    [3, { name: null, road_class: "service" }],
  ]);

  it("draws every selected line: with trips in their class, without as class -1 first", () => {
    const drawn = drawnSegments(result, roads, [100]);
    assert.deepEqual(
      drawn.map((d) => d.props),
      [
        {
          segment_id: 3,
          cls: -1,
          name: null,
          road_class: "service",
          trips_volume: null,
          vmt: null,
          avg_speed: null,
        },
        {
          segment_id: 2,
          cls: 0,
          name: null,
          road_class: "residential",
          trips_volume: 20,
          vmt: 0.4,
          avg_speed: null,
        },
        {
          segment_id: 1,
          cls: 1,
          name: "Rue A",
          road_class: "primary",
          trips_volume: 500,
          vmt: 12.5,
          avg_speed: 30.1,
        },
      ],
    );
    assert.deepEqual(drawn[2].line, result.lines.get(1));
  });

  it("lists the segments with trips, named where the network names them", () => {
    assert.deepEqual(
      segmentRows(result, roads).map((r) => [r.segment_id, r.name]),
      [
        [1, "Rue A"],
        [2, null],
      ],
    );
  });
});
