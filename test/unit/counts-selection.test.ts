import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { monthPeriod } from "../../src/app/counts/metering.js";
import { parseMetricsFilters } from "../../src/domain/counts/metrics-request.js";
import { parseRoadClasses, parseSelector } from "../../src/domain/counts/selection.js";
import { DomainError } from "../../src/domain/errors.js";
import { expansionFactor, INDEX_PANEL, monthlyExpansion } from "../../src/engine/expansion.js";
import {
  daysOfTypeInMonth,
  histogramPercentile,
  type MetricsQuery,
} from "../../src/engine/counts/metrics.js";
import { metricsFromAggregates } from "../../src/app/counts/metrics.js";
import { emptySegmentMonth } from "../../src/engine/counts/segment-stats.js";
import { type SegmentStatsRepo } from "../../src/app/ports/store.js";
import { gridNetwork } from "../helpers/grid-network.js";
import { resolveSelection, type SelectionRequest } from "../../src/domain/counts/resolve.js";
import { Network } from "../../src/engine/network/network.js";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import {
  classifyInPolygon,
  lineIntersectsPolygon,
  lineWithinPolygon,
  type PolygonRings,
} from "../../src/engine/network/select.js";
import type { LonLat } from "../../src/engine/network/types.js";

const ring = (...points: LonLat[]): LonLat[] => [...points, points[0]];

describe("polygon predicates", () => {
  // A 10 × 10 square with a 2 × 2 hole in the middle.
  const holed: PolygonRings = [
    ring([0, 0], [10, 0], [10, 10], [0, 10]),
    ring([4, 4], [6, 4], [6, 6], [4, 6]),
  ];
  // A U: two arms (x 0..3 and 7..10) joined along the bottom (y 0..3).
  const u: PolygonRings = [ring([0, 0], [10, 0], [10, 10], [7, 10], [7, 3], [3, 3], [3, 10], [0, 10])];

  it("classifies points against outer ring and holes", () => {
    assert.equal(classifyInPolygon([1, 1], holed), -1);
    assert.equal(classifyInPolygon([5, 5], holed), 1);
    assert.equal(classifyInPolygon([4, 5], holed), 0);
    assert.equal(classifyInPolygon([10, 5], holed), 0);
    assert.equal(classifyInPolygon([11, 5], holed), 1);
  });

  it("a line across the U's notch intersects but is not within", () => {
    const across: LonLat[] = [
      [1, 8],
      [9, 8],
    ];
    assert.equal(lineIntersectsPolygon(across, u), true);
    assert.equal(lineWithinPolygon(across, u), false);
    const inArm: LonLat[] = [
      [1, 1],
      [1, 9],
    ];
    assert.equal(lineWithinPolygon(inArm, u), true);
  });

  it("a line joining two boundary corners across the notch is not within", () => {
    const chord: LonLat[] = [
      [3, 10],
      [7, 10],
    ];
    assert.equal(lineWithinPolygon(chord, u), false);
  });

  it("lines in the hole do not intersect; lines through it are not within", () => {
    const inHole: LonLat[] = [
      [4.5, 5],
      [5.5, 5],
    ];
    assert.equal(lineIntersectsPolygon(inHole, holed), false);
    const through: LonLat[] = [
      [2, 5],
      [8, 5],
    ];
    assert.equal(lineIntersectsPolygon(through, holed), true);
    assert.equal(lineWithinPolygon(through, holed), false);
  });

  it("a line passing through without a vertex inside intersects", () => {
    const passing: LonLat[] = [
      [-5, 2],
      [15, 2],
    ];
    assert.equal(lineIntersectsPolygon(passing, holed), true);
    assert.equal(
      lineIntersectsPolygon(
        [
          [-5, -1],
          [15, -1],
        ],
        holed,
      ),
      false,
    );
  });
});

describe("parseSelector", () => {
  const point = { type: "POINT", coordinates: [7.42, 43.73] };

  it("converts radius units to metres and defaults geom_mode to intersects", () => {
    const radiusOf = (buffer: number, unit: string) => {
      const s = parseSelector({ radius: { point, buffer, unit } });
      assert.equal(s.kind, "radius");
      return s.kind === "radius" ? [s.radiusM, s.mode] : [];
    };
    assert.deepEqual(radiusOf(1, "mile"), [1609.344, "intersects"]);
    assert.deepEqual(radiusOf(2, "MI"), [3218.688, "intersects"]);
    assert.deepEqual(radiusOf(1.5, "km"), [1500, "intersects"]);
    assert.deepEqual(radiusOf(250, "meters"), [250, "intersects"]);
    assert.deepEqual(radiusOf(1000, "ft"), [304.8, "intersects"]);
    const variant = parseSelector({
      radius: { point, distance: 3, distance_unit: "miles", geom_mode: "Within" },
    });
    assert.deepEqual(variant, { kind: "radius", point: [7.42, 43.73], radiusM: 4828.032, mode: "within" });
  });

  it("reads polygons and multipolygons with any type case", () => {
    const coordinates = [ring([7, 43], [8, 43], [8, 44], [7, 44])];
    const poly = parseSelector({ polygon: { type: "polygon", coordinates } });
    assert.deepEqual(poly, { kind: "polygon", polygons: [coordinates], mode: "intersects" });
    const multi = parseSelector({
      polygon: { type: "MultiPolygon", coordinates: [coordinates, coordinates] },
    });
    assert.equal(multi.kind === "polygon" && multi.polygons.length, 2);
  });

  it("fails with a DomainError naming the field", () => {
    const failsAt = (geometry: object, field: string) =>
      assert.throws(
        () => parseSelector(geometry),
        (e: unknown) => e instanceof DomainError && e.httpStatus === 400 && e.field === field,
      );
    failsAt({ radius: { point, buffer: 1 } }, "geometry.radius.unit");
    failsAt({ radius: { point, unit: "km" } }, "geometry.radius.buffer");
    failsAt({ radius: { point, buffer: -1, unit: "km" } }, "geometry.radius.buffer");
    failsAt({ radius: { point, distance: 1, distance_unit: "league" } }, "geometry.radius.distance_unit");
    failsAt({ nearest: { point, number_segments: 0 } }, "geometry.nearest.number_segments");
    failsAt(
      {
        polygon: {
          type: "Polygon",
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [0, 0],
            ],
          ],
        },
      },
      "geometry.polygon.coordinates[0]",
    );
    failsAt({ segment_ids: [] }, "geometry.segment_ids");
  });
});

describe("parseRoadClasses", () => {
  it("is null without a filter; include minus exclude otherwise", () => {
    assert.equal(parseRoadClasses(undefined), null);
    assert.equal(parseRoadClasses({}), null);
    assert.deepEqual(
      [...parseRoadClasses({ include: ["Motorway", "trunk"], exclude: ["trunk"] })!],
      ["motorway"],
    );
    assert.equal(parseRoadClasses({ exclude: ["motorway"] })!.has("motorway"), false);
    assert.equal(parseRoadClasses({ exclude: ["motorway"] })!.has("trunk"), true);
  });
});

describe("metrics filters and helpers", () => {
  const base = { fields: ["segment_id"], day_part: "all", day_type: "all", direction: "bidirectional" };

  it("resolves year, day type, day part and source", () => {
    const f = parseMetricsFilters({ ...base, date: { year: 2024 }, data_version: 1 });
    assert.equal(f.months.length, 12);
    assert.deepEqual(f.months[11], { year: 2024, month: 12 });
    assert.deepEqual(f.sources, ["lbs", "telematics"]);
    assert.equal(f.dayPart.name, "All Day");
    const g = parseMetricsFilters({
      ...base,
      day_part: "3",
      day_type: "WEEKEND",
      source: "agps",
      date: { year: 2024, month: 2 },
      data_version: 2,
    });
    assert.deepEqual([g.dayPart.startHour, g.dayPart.endHour], [10, 14]);
    assert.deepEqual(g.daysOfWeek, [6, 7]);
    assert.deepEqual(g.sources, ["telematics"]);
    assert.deepEqual(g.months, [{ year: 2024, month: 2 }]);
  });

  it("counts days of a type in a month", () => {
    const jan2025 = { year: 2025, month: 1 };
    assert.equal(daysOfTypeInMonth(jan2025, [1, 2, 3, 4, 5, 6, 7]), 31);
    assert.equal(daysOfTypeInMonth(jan2025, [1, 2, 3, 4, 5]), 23);
    assert.equal(daysOfTypeInMonth(jan2025, [6, 7]), 8);
    assert.equal(daysOfTypeInMonth({ year: 2024, month: 2 }, [1]), 4);
    assert.equal(daysOfTypeInMonth({ year: 2024, month: 2 }, [4]), 5);
  });

  it("counts only the days with trips of a month the data covers in part", () => {
    const jan2025 = { year: 2025, month: 1 };
    // Data from Monday 20 to Thursday 30 January: 11 days, 9 of them weekdays.
    const withTrips = new Set<string>();
    for (let d = 20; d <= 31; d++) if (d !== 31) withTrips.add(`2025-01-${d}`);
    assert.equal(daysOfTypeInMonth(jan2025, [1, 2, 3, 4, 5, 6, 7], withTrips), 11);
    assert.equal(daysOfTypeInMonth(jan2025, [1, 2, 3, 4, 5], withTrips), 9);
    assert.equal(daysOfTypeInMonth(jan2025, [6, 7], withTrips), 2);
    // Days of another month, or none of the type: the calendar, as without tallies.
    assert.equal(daysOfTypeInMonth(jan2025, [1, 2, 3, 4, 5], new Set(["2025-02-03"])), 23);
    assert.equal(daysOfTypeInMonth(jan2025, [6, 7], new Set(["2025-01-20"])), 8);
  });

  it("averages a partly covered month's volume over its days with trips", async () => {
    const [segment] = gridNetwork().segments;
    const stat = { ...emptySegmentMonth(segment.id, "2025-01"), trips: 110 };
    const stats = { query: () => [stat] } as unknown as SegmentStatsRepo;
    const query: MetricsQuery = {
      country: "mc",
      segments: [segment],
      fields: ["trips_volume"],
      months: [{ year: 2025, month: 1 }],
      daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
      hours: Array.from({ length: 24 }, (_, h) => h),
      direction: "bidirectional",
      vehicleClasses: ["personal"],
      sources: ["lbs"],
    };
    const asked: unknown[] = [];
    const tallies = {
      devicesByMonth: async () => new Map<string, number>(),
      daysWithTrips: async (...args: unknown[]) => {
        asked.push(args);
        return new Set(Array.from({ length: 11 }, (_, i) => `2025-01-${20 + i}`));
      },
    };
    assert.deepEqual([...(await metricsFromAggregates(stats, tallies)(query))], [[10]]); // 110 trips / 11 days
    assert.deepEqual(asked, [["mc", ["personal"], "2025-01-01", "2025-01-31"]]);
    assert.deepEqual([...(await metricsFromAggregates(stats)(query))], [[4]]); // no tallies: 110 / 31 calendar days
  });

  it("reads percentiles from speed histograms", () => {
    assert.equal(histogramPercentile([0, 10], 0.5), 7.5);
    assert.equal(histogramPercentile([10, 0, 10], 0.75), 12.5);
    assert.equal(histogramPercentile([], 0.85), null);
  });

  it("expands to a panel of INDEX_PANEL devices per month, else counts as observed", () => {
    assert.equal(INDEX_PANEL, 10_000);
    assert.equal(expansionFactor(250), 40);
    assert.equal(expansionFactor(0), 1);
    assert.equal(expansionFactor(undefined), 1);
    const factorOf = monthlyExpansion(new Map([["2025-03", 500]]));
    assert.equal(factorOf("2025-03"), 20);
    assert.equal(factorOf("2025-04"), 1);
  });

  it("bounds usage periods by calendar month", () => {
    assert.deepEqual(monthPeriod(new Date("2025-12-31T23:59:59Z")), {
      start: "2025-12-01T00:00:00.000Z",
      end: "2026-01-01T00:00:00.000Z",
    });
    assert.deepEqual(monthPeriod(new Date(), "2024-02").end, "2024-03-01T00:00:00.000Z");
  });
});

describe("indexed polygon predicates agree with robust-point-in-polygon", () => {
  it("classifies seeded random points and edge midpoints, and vertices as on the boundary, of random star polygons alike", async () => {
    const { default: classifyPoint } = await import("robust-point-in-polygon");
    const { Rng } = await import("../../src/engine/simulate/rng.js");
    const rng = new Rng(7, "polygon-classify");
    for (let shape = 0; shape < 40; shape++) {
      const n = 3 + rng.int(60);
      // Grid-snapped coordinates make boundary and vertex cases common.
      const snap = (v: number) => Math.round(v * 4) / 4;
      const outer: LonLat[] = Array.from({ length: n }, (_, i) => {
        const a = (2 * Math.PI * i) / n;
        const r = 2 + rng.next() * 8;
        return [snap(r * Math.cos(a)), snap(r * Math.sin(a))];
      });
      const hole: LonLat[] = [
        [-0.5, -0.5],
        [0.5, -0.5],
        [0.5, 0.5],
        [-0.5, 0.5],
      ];
      const rings: PolygonRings = [ring(...outer), ring(...hole)];
      // robust-point-in-polygon misreads some vertices as outside; a vertex is on the boundary.
      for (const v of [...outer, ...hole]) assert.equal(classifyInPolygon(v, rings), 0, `vertex ${v}`);
      const probes: LonLat[] = [
        ...outer.map((p, i): LonLat => {
          const q = outer[(i + 1) % n];
          return [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2];
        }),
        ...Array.from({ length: 200 }, (): LonLat => [
          snap(rng.next() * 24 - 12),
          snap(rng.next() * 24 - 12),
        ]),
      ];
      const vertices = new Set([...outer, ...hole].map(String));
      for (const p of probes.filter((q) => !vertices.has(String(q)))) {
        const inOuter = classifyPoint(outer, p);
        const inHole = classifyPoint(hole, p);
        const expected = inOuter !== -1 ? inOuter : inHole === -1 ? 1 : inHole === 0 ? 0 : -1;
        assert.equal(classifyInPolygon(p, rings), expected, `shape ${shape} point ${p}`);
      }
    }
  });
});

describe("recent selections", () => {
  const network = gridNetwork();
  const [lon, lat] = network.segments[Math.floor(network.size / 2)].coords[0];
  const registryOf = (n: Network) => new NetworkRegistry(() => n.segments);
  const request = (extra: Partial<SelectionRequest> = {}): SelectionRequest => ({
    geometry: { radius: { point: { type: "point", coordinates: [lon, lat] }, buffer: 400, unit: "m" } },
    country: "gg",
    mode: "vehicle",
    ...extra,
  });
  const ids = (s: { segments: { id: number }[] }) => s.segments.map((x) => x.id);

  it("answer a repeated request with the same segments, and a different one afresh", async () => {
    const networks = registryOf(network);
    const first = await resolveSelection(networks, request());
    assert.ok(first.segments.length > 0);
    assert.deepEqual(ids(await resolveSelection(networks, request())), ids(first));
    // The class filter is part of what is remembered (as a Set it would stringify to {}).
    const classes = [...new Set(first.segments.map((s) => s.roadClass))];
    const only = await resolveSelection(
      networks,
      request({ roadway_classification: { include: [classes[0]] } }),
    );
    assert.ok(only.segments.every((s) => s.roadClass === classes[0]));
    const smaller = await resolveSelection(networks, {
      ...request(),
      geometry: { radius: { point: { type: "point", coordinates: [lon, lat] }, buffer: 200, unit: "m" } },
    });
    assert.ok(smaller.segments.length < first.segments.length);
  });

  it("start afresh for a network loaded anew (a re-import)", async () => {
    const before = await resolveSelection(registryOf(network), request());
    const fewer = new Network(
      "gg",
      network.segments.filter((s) => s.id !== before.segments[0].id),
    );
    const after = await resolveSelection(registryOf(fewer), request());
    assert.deepEqual(ids(after), ids(before).slice(1));
  });
});
