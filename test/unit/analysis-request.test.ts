import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  dayPartLabel,
  dayTypeLabel,
  hourLabel,
  parseBins,
  parseDayParts,
  parseDayTypes,
  parsePercentiles,
} from "../../src/domain/analyses/grammar.js";
import { validateAnalysisRequest, type AnalysisRequestContext } from "../../src/app/analyses/validate.js";
import { DEFAULT_VENDOR_OPTIONS } from "../../src/domain/analyses/vendor-options.js";
import { DomainError, ValidationError, type Issue } from "../../src/domain/errors.js";
import { storeNetworks } from "../../src/app/networks.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { makeOrg, type TestOrg } from "../helpers/app.js";
import { odRequest, seedAnalysisData, squareZone, zoneSet } from "../helpers/analyses.js";

describe("analysis request grammar", () => {
  it("labels day types and day parts as metric rows show them", () => {
    assert.equal(dayTypeLabel(0, { name: "Average Day", start: 1, end: 7 }), "0: Average Day (M-Su)");
    assert.equal(dayTypeLabel(1, { name: "Weekday", start: 1, end: 5 }), "1: Weekday (M-F)");
    assert.equal(dayTypeLabel(2, { name: "Weekend", start: 6, end: 7 }), "2: Weekend (Sa-Su)");
    assert.equal(dayTypeLabel(3, { name: "Tuesday", start: 2, end: 2 }), "3: Tuesday (Tu)");
    assert.equal(dayPartLabel(2, { name: "Peak AM", start: 6, end: 9 }), "2: Peak AM (6am-10am)");
    assert.equal(hourLabel(0, 23), "12am-12am");
    assert.equal(hourLabel(15, 18), "3pm-7pm");
    assert.equal(hourLabel(19, 23), "7pm-12am");
    assert.equal(hourLabel(10, 14), "10am-3pm");
    assert.equal(hourLabel(11, 11), "11am-12pm");
  });

  it("parses the default day types (Average Weekday is Monday to Thursday)", () => {
    const issues: Issue[] = [];
    const types = parseDayTypes("Average Day|17,Average Weekday|14, Average Weekend Day|67", issues);
    assert.deepEqual(issues, []);
    assert.deepEqual(
      types.map((t) => [t.name, t.start, t.end, t.label]),
      [
        ["Average Day", 1, 7, "0: Average Day (M-Su)"],
        ["Average Weekday", 1, 4, "1: Average Weekday (M-Th)"],
        ["Average Weekend Day", 6, 7, "2: Average Weekend Day (Sa-Su)"],
      ],
    );
  });

  it("reports every bad day-type item with its position", () => {
    const issues: Issue[] = [];
    parseDayTypes("A|76,B|08,C|18,D 15,|15,a|11,E|1,F|22", issues);
    assert.deepEqual(
      issues.map((i) => i.field),
      [
        "day_types[0]",
        "day_types[1]",
        "day_types[2]",
        "day_types[3]",
        "day_types[4]",
        "day_types[5]",
        "day_types[6]",
      ],
    );
    assert.match(issues[0].message, /end day is before the start day/);
    assert.match(issues[1].message, /1 \(Monday\) to 7 \(Sunday\)/);
    assert.match(issues[3].message, /"\|" is missing/);
    assert.match(issues[4].message, /empty name/);
    assert.match(issues[5].message, /"a" is given twice/);
    assert.match(issues[6].message, /two weekday digits/);
  });

  it("parses day parts with inclusive end hours and rejects bad ones", () => {
    const issues: Issue[] = [];
    const parts = parseDayParts("All Day|0023,Peak AM|0609,Late|2223", issues);
    assert.deepEqual(issues, []);
    assert.deepEqual(
      parts.map((p) => p.label),
      ["0: All Day (12am-12am)", "1: Peak AM (6am-10am)", "2: Late (10pm-12am)"],
    );
    const bad: Issue[] = [];
    parseDayParts("Night|2205,X|0624,Y|609,Z|0a09", bad);
    assert.equal(bad.length, 4);
    assert.match(bad[0].message, /end hour is before the start hour/);
    assert.match(bad[1].message, /hours are 00 to 23/);
    assert.match(bad[2].message, /two two-digit hours/);
  });

  it("parses contiguous bins with an open last bin", () => {
    const issues: Issue[] = [];
    assert.deepEqual(parseBins("0-10, 10-20,20-30.5,30.5+", "b", issues), [
      { from: 0, to: 10 },
      { from: 10, to: 20 },
      { from: 20, to: 30.5 },
      { from: 30.5, to: null },
    ]);
    assert.deepEqual(issues, []);
  });

  it("rejects gaps, overlaps, reversed, open-in-the-middle and garbage bins", () => {
    for (const [text, message] of [
      ["0-10,15-20", /does not start where the previous bin ends \(10\)/],
      ["0-10,5-20", /contiguous/],
      ["10-0", /upper bound must be greater/],
      ["0-10,10+,20-30", /only the last bin may be open-ended/],
      ["0-10,abc", /is not a bin/],
      ["", /is not a bin/],
    ] as const) {
      const issues: Issue[] = [];
      assert.deepEqual(parseBins(text, "trip_speed_bins", issues), []);
      assert.equal(issues.length, 1, text);
      assert.match(issues[0].message, message);
    }
  });

  it("parses percentiles 1..99, sorted without duplicates", () => {
    const issues: Issue[] = [];
    assert.deepEqual(parsePercentiles("95, 5,50,5", "p", issues), [5, 50, 95]);
    parsePercentiles("0,100,2.5,x", "p", issues);
    assert.deepEqual(
      issues.map((i) => i.field),
      ["p[0]", "p[1]", "p[2]", "p[3]"],
    );
  });
});

describe("validateAnalysisRequest", () => {
  const store = new SqliteStore(":memory:");
  let org: TestOrg;
  let other: TestOrg;
  let ctx: AnalysisRequestContext;
  before(async () => {
    org = await makeOrg(store, "Planners");
    other = await makeOrg(store, "Others");
    await seedAnalysisData(store, org.orgId);
    await store.zoneSets.create(zoneSet(other.orgId, "Elsewhere", [squareZone("Z", 1, 0, -25)]));
    ctx = {
      store,
      networks: storeNetworks(store.network),
      orgId: org.orgId,
    };
  });

  const issuesOf = async (body: unknown): Promise<Issue[]> => {
    try {
      await validateAnalysisRequest(body, ctx);
    } catch (e) {
      if (e instanceof ValidationError) return e.issues;
      throw e;
    }
    assert.fail("expected a ValidationError");
  };

  it("normalises a minimal request with defaults and snapshots zone sets by uuid", async () => {
    const spec = await validateAnalysisRequest(
      odRequest(org.email, {
        analysis_type: "od_analysis",
        travel_mode_type: "TRUCK",
        output_type: undefined,
      }),
      ctx,
    );
    const downtown = (await store.zoneSets.get(org.orgId, "downtown"))!;
    assert.match(spec.name, /^analysis_[0-9a-f]{12}$/);
    assert.equal(spec.name, `analysis_${spec.uuid.replace(/-/g, "").slice(0, 12)}`);
    assert.equal(spec.analysisType, "OD_Analysis");
    assert.equal(spec.travelMode, "Truck");
    assert.deepEqual(spec.vehicleClasses, ["medium_commercial", "heavy_commercial"]);
    assert.equal(spec.country, "mc");
    assert.equal(spec.outputType, "index");
    assert.deepEqual(spec.originSets, [{ uuid: downtown.uuid, name: "Downtown" }]);
    assert.deepEqual(spec.dateRanges, [
      { start_date: "01/01/2025", end_date: "01/31/2025", startDay: "2025-01-01", endDay: "2025-01-31" },
    ]);
    assert.deepEqual(
      spec.dayTypes.map((d) => d.label),
      ["0: Average Day (M-Su)", "1: Average Weekday (M-Th)", "2: Average Weekend Day (Sa-Su)"],
    );
    assert.equal(spec.dayParts.length, 6);
    assert.equal(spec.dayParts[2].label, "2: Peak AM (6am-10am)");
    assert.equal(spec.unit, "miles");
    assert.deepEqual(spec.bins.speed.at(-1), { from: 80, to: null });
    assert.equal(spec.speedPercentiles, null);
    assert.deepEqual(spec.tags, []);
  });

  it("accepts {uuid} and {zone_set_name} references, drops duplicates, lets a set be origin and destination", async () => {
    const downtown = (await store.zoneSets.get(org.orgId, "Downtown"))!;
    const spec = await validateAnalysisRequest(
      odRequest(org.email, {
        analysis_name: "  Trucks Jan  ",
        oz_sets: [{ uuid: downtown.uuid }, { name: "DOWNTOWN" }, { zone_set_name: "Harbour" }],
        dz_sets: [{ name: "Downtown" }],
        tags: "freight, january,freight",
        unit_of_measurement: "KM",
        enable_speed_percentile: true,
        speed_percentile_bins: "50,85",
        trip_length_bins: "0-5,5+",
        is_ui_enabled: true,
        travel_mode_data: { any: "thing" },
      }),
      ctx,
    );
    assert.equal(spec.name, "Trucks Jan");
    assert.deepEqual(
      spec.originSets.map((s) => s.name),
      ["Downtown", "Harbour"],
    );
    assert.deepEqual(
      spec.destinationSets.map((s) => s.name),
      ["Downtown"],
    );
    assert.deepEqual(spec.tags, ["freight", "january"]);
    assert.equal(spec.unit, "km");
    assert.deepEqual(spec.speedPercentiles, [50, 85]);
    assert.deepEqual(spec.bins.length, [
      { from: 0, to: 5 },
      { from: 5, to: null },
    ]);
  });

  it("answers 403 for a login outside the key's organization, before anything else", async () => {
    await assert.rejects(
      async () => await validateAnalysisRequest({ ...odRequest(other.email), oz_sets: [] }, ctx),
      (e: unknown) => e instanceof DomainError && e.httpStatus === 403 && e.field === "insight_login_email",
    );
  });

  it("requires insight_login_email", async () => {
    assert.deepEqual(await issuesOf({ analysis_type: "OD_Analysis" }), [
      { field: "insight_login_email", message: "is required" },
    ]);
  });

  it("collects every problem with its field", async () => {
    const issues = await issuesOf(
      odRequest(org.email, {
        analysis_name: "x".repeat(51),
        analysis_type: "Teleport_Analysis",
        travel_mode_type: "Hovercraft",
        output_type: "trips",
        oz_sets: [{ name: "Nowhere" }, { name: "Elsewhere" }, { id: 3 }],
        dz_sets: [],
        traveler_attributes: "yes",
        day_type: "Weekday|15",
        day_types: "Mon|11,Bad|80",
      }),
    );
    const byField = Object.fromEntries(issues.map((i) => [i.field, i.message]));
    assert.deepEqual(Object.keys(byField).sort(), [
      "analysis_name",
      "analysis_type",
      "day_type",
      "day_types[1]",
      "dz_sets",
      "output_type",
      "oz_sets[0]",
      "oz_sets[1]",
      "oz_sets[2]",
      "travel_mode_type",
      "traveler_attributes",
    ]);
    assert.match(byField.analysis_type, /supported: OD_Analysis/);
    assert.match(byField.output_type, /supported: index, volume/);
    assert.match(byField.travel_mode_type, /All_Vehicles, .*Truck, Bus, Rail, Bicycle, Pedestrian/);
    assert.equal(byField["oz_sets[0]"], 'no zone set "Nowhere" in this organization');
    assert.equal(byField["oz_sets[1]"], 'no zone set "Elsewhere" in this organization');
    assert.equal(byField.day_type, "is not a field; did you mean day_types?");
  });

  it("checks date ranges: strict dates, order, overlap, within the mode's supported periods", async () => {
    const issues = await issuesOf(
      odRequest(org.email, {
        date_ranges: [
          { start_date: "02/30/2025", end_date: "03/01/2025" },
          { start_date: "01/31/2025", end_date: "01/01/2025" },
          { start_date: "01/01/2025", end_date: "02/28/2025" },
          { start_date: "01/15/2025", end_date: "01/20/2025" },
          { start_date: "03/01/2025", end_date: "03/31/2025" },
          { start_date: "2025-01-01", end_date: "01/31/2025" },
        ],
      }),
    );
    assert.deepEqual(issues, [
      { field: "date_ranges[0]", message: "start_date and end_date must be real dates written MM/DD/YYYY" },
      { field: "date_ranges[1]", message: "end_date is before start_date" },
      { field: "date_ranges[3]", message: "overlaps 01/01/2025-02/28/2025" },
      {
        field: "date_ranges[4]",
        message: "03/01/2025-03/31/2025 is not within the supported data periods (01/01/2025-02/28/2025)",
      },
      { field: "date_ranges[5]", message: "start_date and end_date must be real dates written MM/DD/YYYY" },
    ]);
    // Bicycles have no data at all.
    const bike = await issuesOf(odRequest(org.email, { travel_mode_type: "Bicycle" }));
    assert.match(bike[0].message, /not within the supported data periods \(none\)/);
    assert.match((await issuesOf(odRequest(org.email, { date_ranges: [] })))[0].message, /non-empty array/);
  });

  it("allows volume output only with calibrated zones", async () => {
    const issues = await issuesOf(odRequest(org.email, { output_type: "volume" }));
    assert.equal(issues[0].field, "output_type");
    assert.match(issues[0].message, /calibration_type/);
    const spec = await validateAnalysisRequest(
      odRequest(org.email, { output_type: "Volume", dz_sets: [{ name: "Counted" }] }),
      ctx,
    );
    assert.equal(spec.outputType, "volume");
    const bike = odRequest(org.email, {
      output_type: "volume",
      travel_mode_type: "Bicycle",
      dz_sets: [{ name: "Counted" }],
    });
    assert.ok(
      (await issuesOf(bike)).some(
        (i) =>
          i.field === "output_type" &&
          i.message ===
            "volume output is calibrated with vehicle counts; it is not available for Bicycle, use index",
      ),
    );
  });

  it("infers the country from the zones or takes a given one", async () => {
    const far = zoneSet(org.orgId, "Far away", [squareZone("Moon", 1, 500_000, 500_000)]);
    await store.zoneSets.create(far);
    assert.deepEqual(
      await issuesOf(
        odRequest(org.email, { oz_sets: [{ name: "Far away" }], dz_sets: [{ name: "Far away" }] }),
      ),
      [{ field: "oz_sets", message: "the zones lie outside every imported road network" }],
    );
    assert.equal((await validateAnalysisRequest(odRequest(org.email, { country: "MC" }), ctx)).country, "mc");
    assert.deepEqual(await issuesOf(odRequest(org.email, { country: "fr" })), [
      { field: "country", message: 'no road network for "fr"; imported: mc' },
    ]);
  });

  it("type-checks optional fields published clients send", async () => {
    const issues = await issuesOf(
      odRequest(org.email, {
        tags: [1, 2],
        enable_visualization: "no",
        travel_mode_data: 5,
        trip_circuity_bins: "1-2,3+",
        unit_of_measurement: "furlongs",
      }),
    );
    assert.deepEqual(
      issues.map((i) => i.field),
      ["unit_of_measurement", "trip_circuity_bins[1]", "tags", "enable_visualization", "travel_mode_data"],
    );
  });

  it("leaves metric_type to Network_Performance: another type ignores it, as top_routes_count", async () => {
    const spec = await validateAnalysisRequest(odRequest(org.email, { metric_type: "nonsense" }), ctx);
    assert.equal(spec.options?.npMetricType, undefined);
  });

  it("reads the vendor options, with the client's empty defaults", async () => {
    const ctxSpec = await validateAnalysisRequest(
      odRequest(org.email, {
        "11": "",
        zone_intersection_type: "",
        aadt_calibration_year: "",
        segment_types: [],
        enable_15min: true,
        is_massive_queue: true,
        enable_completion_email: false,
      }),
      ctx,
    );
    assert.deepEqual(ctxSpec.vendor, {
      ...DEFAULT_VENDOR_OPTIONS,
      fifteenMinute: true,
      massiveQueue: true,
    });
    const issues = await issuesOf(
      odRequest(org.email, {
        enable_home_work_locations: true,
        aadt_calibration_year: "1999",
        segment_types: ["Primary", "Footway"],
        zone_intersection_type: "touching",
        enable_15min: "yes",
      }),
    );
    assert.deepEqual(
      issues.map((i) => i.field),
      [
        "enable_home_work_locations",
        "aadt_calibration_year",
        "segment_types",
        "enable_15min",
        "zone_intersection_type",
      ],
    );
  });
});
