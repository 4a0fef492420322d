import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  analysisRequest,
  checkDateRanges,
  checkForm,
  isoToUs,
  issueSlot,
  namedItems,
  suggestedRange,
  usToIso,
  TRAVEL_MODES as FORM_MODES,
  OUTPUT_TYPES as FORM_OUTPUT_TYPES,
  METRIC_TYPE_CHOICES,
  type AnalysisForm,
} from "../../src/web/client/views/analyses/form-logic.js";
import { NP_METRIC_TYPES } from "../../src/domain/analyses/network-performance.js";
import { TRAVEL_MODES } from "../../src/domain/travel-modes.js";
import { OUTPUT_TYPES } from "../../src/domain/analyses/spec.js";

const SUPPORTED = [
  { start_date: "01/01/2025", end_date: "03/31/2025" },
  { start_date: "06/01/2025", end_date: "06/30/2025" },
];

const form = (extra: Partial<AnalysisForm> = {}): AnalysisForm => ({
  name: " Peak flows ",
  email: "demo@streetflow.local",
  analysisType: "OD_Analysis",
  travelMode: "All_Vehicles",
  country: "mc",
  originSets: ["u1"],
  destinationSets: ["u1", "u2"],
  dateRanges: [{ start: "2025-06-01", end: "2025-06-30" }],
  dayTypes: ["Average Day|17"],
  dayParts: ["All Day|0023", "Peak AM|0609"],
  outputType: "index",
  tripAttributes: false,
  travelerAttributes: true,
  ...extra,
});

describe("web analyses: form rules", () => {
  it("converts between date inputs and the API's MM/DD/YYYY", () => {
    assert.equal(isoToUs("2025-01-31"), "01/31/2025");
    assert.equal(usToIso("01/31/2025"), "2025-01-31");
    assert.equal(isoToUs(""), null);
  });

  it("suggests the latest month of the latest period", () => {
    assert.deepEqual(suggestedRange(SUPPORTED), { start: "2025-06-01", end: "2025-06-30" });
    assert.deepEqual(suggestedRange([{ start_date: "01/15/2025", end_date: "01/20/2025" }]), {
      start: "2025-01-15",
      end: "2025-01-20",
    });
    assert.equal(suggestedRange([]), null);
  });

  it("checks each range: complete, real, ordered, not overlapping, within one period", () => {
    const check = (ranges: { start: string; end: string }[]) =>
      checkDateRanges(ranges, SUPPORTED).map((i) => `${i.field}: ${i.message}`);
    assert.deepEqual(check([{ start: "2025-01-01", end: "2025-03-31" }]), []);
    assert.deepEqual(check([]), ["date_ranges: Add at least one date range."]);
    assert.deepEqual(check([{ start: "2025-01-01", end: "" }]), [
      "date_ranges[0]: Enter a start and an end date.",
    ]);
    assert.deepEqual(check([{ start: "2025-02-30", end: "2025-03-01" }]), [
      "date_ranges[0]: Enter real calendar dates.",
    ]);
    assert.deepEqual(check([{ start: "2025-03-02", end: "2025-03-01" }]), [
      "date_ranges[0]: The end date is before the start date.",
    ]);
    assert.deepEqual(
      check([
        { start: "2025-01-01", end: "2025-01-31" },
        { start: "2025-01-31", end: "2025-02-10" },
      ]),
      ["date_ranges[1]: Overlaps the range 01/01/2025 – 01/31/2025."],
    );
    assert.deepEqual(check([{ start: "2025-03-15", end: "2025-06-15" }]), [
      "date_ranges[0]: Dates must lie within one data period: 01/01/2025 – 03/31/2025, 06/01/2025 – 06/30/2025.",
    ]);
    // Without the periods (still loading) only the shape is checked; the server checks the rest.
    assert.deepEqual(checkDateRanges([{ start: "2030-01-01", end: "2030-01-02" }], null), []);
  });

  it("checks the whole form and names each field at fault", () => {
    assert.deepEqual(checkForm(form(), SUPPORTED), []);
    const issues = checkForm(
      form({ email: "nobody", originSets: [], dayTypes: ["Weekday|18"], dayParts: [], name: "x".repeat(51) }),
      SUPPORTED,
    );
    assert.deepEqual(
      issues.map((i) => i.field),
      ["analysis_name", "insight_login_email", "oz_sets", "day_types", "day_parts"],
    );
    assert.deepEqual(namedItems(["All Day|0023"], " Night|2223, ,"), ["All Day|0023", "Night|2223"]);
  });

  it("builds the request body with zone sets by uuid and dates as MM/DD/YYYY", () => {
    assert.deepEqual(analysisRequest(form()), {
      insight_login_email: "demo@streetflow.local",
      analysis_name: "Peak flows",
      analysis_type: "OD_Analysis",
      travel_mode_type: "All_Vehicles",
      output_type: "index",
      country: "mc",
      oz_sets: [{ uuid: "u1" }],
      dz_sets: [{ uuid: "u1" }, { uuid: "u2" }],
      date_ranges: [{ start_date: "06/01/2025", end_date: "06/30/2025" }],
      day_types: "Average Day|17",
      day_parts: "All Day|0023,Peak AM|0609",
      trip_attributes: false,
      traveler_attributes: true,
    });
    assert.equal("analysis_name" in analysisRequest(form({ name: "  " })), false);
  });

  it("asks each analysis type for its own destinations: zone sets or a preset geography", () => {
    const preset = form({ analysisType: "OD_Preset_Geography", destinationSets: [], geographyType: "" });
    assert.deepEqual(
      checkForm(preset, SUPPORTED).map((i) => i.field),
      ["geography_type"],
    );
    const body = analysisRequest({ ...preset, geographyType: "admin_10" });
    assert.equal(body.geography_type, "admin_10");
    assert.equal("dz_sets" in body, false);
    assert.equal("geography_type" in analysisRequest(form()), false);
    assert.equal(issueSlot("geography_type"), "geography_type");
    const activity = analysisRequest(form({ analysisType: "Zone_Activity_Analysis", destinationSets: [] }));
    assert.deepEqual(
      checkForm(form({ analysisType: "Zone_Activity_Analysis", destinationSets: [] }), SUPPORTED),
      [],
    );
    assert.equal("dz_sets" in activity || "geography_type" in activity, false);
  });

  it("sends top_routes_count with the top-routes types and metric_type with Network_Performance", () => {
    const routes = form({ analysisType: "Top_Routes_ZA", destinationSets: [], topRoutesCount: " 25 " });
    assert.equal(analysisRequest(routes).top_routes_count, 25);
    // Left empty: the server's default, sent as such.
    assert.equal(analysisRequest({ ...routes, topRoutesCount: "" }).top_routes_count, 10);
    for (const bad of ["0", "101", "2.5", "ten"])
      assert.deepEqual(
        checkForm({ ...routes, topRoutesCount: bad }, SUPPORTED).map((i) => i.field),
        ["top_routes_count"],
        bad,
      );
    const np = form({ analysisType: "Network_Performance", destinationSets: [], metricType: "travel_time" });
    assert.equal(analysisRequest(np).metric_type, "travel_time");
    assert.equal(analysisRequest({ ...np, metricType: undefined }).metric_type, "all");
    assert.deepEqual(
      METRIC_TYPE_CHOICES.map((m) => m.value),
      [...NP_METRIC_TYPES],
    );
    // Neither field is sent with another type.
    const od = analysisRequest(form({ topRoutesCount: "5", metricType: "speed" }));
    assert.equal("top_routes_count" in od || "metric_type" in od, false);
    assert.equal(issueSlot("top_routes_count"), "top_routes_count");
    assert.equal(issueSlot("metric_type"), "metric_type");
  });

  it("puts each server issue next to its field", () => {
    assert.equal(issueSlot("oz_sets[1]"), "oz_sets");
    assert.equal(issueSlot("date_ranges[2]"), "date_ranges[2]");
    assert.equal(issueSlot("date_ranges"), "date_ranges");
    assert.equal(issueSlot("day_parts[0]"), "day_parts");
    assert.equal(issueSlot("country"), "oz_sets");
    assert.equal(issueSlot("trip_speed_bins"), "form");
    assert.equal(issueSlot(undefined), "form");
  });
});

describe("analysis form travel modes", () => {
  it("offers every travel mode the API accepts, in the API's order", () => {
    assert.deepEqual(
      FORM_MODES.map((m) => m.value),
      Object.keys(TRAVEL_MODES),
    );
  });
});

describe("analysis form output types", () => {
  it("offers every output type the API accepts, in the API's order, each with a hint", () => {
    assert.deepEqual(
      FORM_OUTPUT_TYPES.map((t) => t.value),
      [...OUTPUT_TYPES],
    );
    for (const type of FORM_OUTPUT_TYPES) assert.ok(type.hint.length > 0, type.value);
    assert.equal(analysisRequest(form({ outputType: "trip_counts" })).output_type, "trip_counts");
  });
});

describe("analysis form: zone activity's home and work locations", () => {
  it("asks for the traveller kinds chosen, over the grid or a preset geography", () => {
    const activity = form({ analysisType: "Zone_Activity_Analysis", destinationSets: [] });
    assert.equal("enable_home_work_locations" in analysisRequest(activity), false);
    const body = analysisRequest({
      ...activity,
      homeWorkKinds: ["resident", "worker"],
      homeWorkGeography: "",
    });
    assert.equal(body.enable_home_work_locations, true);
    assert.deepEqual(
      [body.hwl_enable_visitor, body.hwl_enable_resident, body.hwl_enable_worker],
      [false, true, true],
    );
    assert.equal("geography_type" in body, false);
    const preset = analysisRequest({
      ...activity,
      homeWorkKinds: ["visitor"],
      homeWorkGeography: "admin_10",
    });
    assert.equal(preset.geography_type, "admin_10");
    // Other types never send them.
    assert.equal(
      "enable_home_work_locations" in analysisRequest(form({ homeWorkKinds: ["visitor"] })),
      false,
    );
    assert.equal(issueSlot("enable_home_work_locations"), "enable_home_work_locations");
  });
});
