import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ANALYSIS_CATALOGUE, TYPE_FIELDS } from "../../src/domain/analyses/catalogue.js";
import { ANALYSIS_REQUEST_FIELDS } from "../../src/domain/analyses/request.js";
import { DEFAULT_BINS } from "../../src/domain/analyses/spec.js";
import { VENDOR_FIELDS_NOT_USED, VENDOR_OPTION_FIELDS } from "../../src/domain/analyses/vendor-options.js";
import { DEFAULT_DAY_PARTS, DEFAULT_DAY_TYPES } from "../../src/domain/analyses/grammar.js";
import { TRAVEL_MODES as SERVER_TRAVEL_MODES } from "../../src/domain/travel-modes.js";
import { ANALYSIS_TYPES, TRAVEL_MODES } from "../../src/shared/vocabulary.js";
import {
  DAY_PARTS as PANEL_DAY_PARTS,
  DAY_TYPES as PANEL_DAY_TYPES,
} from "../../src/web/client/views/counts/query.js";
import { TRAVEL_MODES as FORM_TRAVEL_MODES } from "../../src/web/client/views/analyses/form-logic.js";

const SHARED = new URL("../../src/shared/", import.meta.url).pathname;

describe("shared vocabulary (src/shared)", () => {
  it("imports nothing of the project outside itself, so the server and the browser bundle can both use it", () => {
    for (const file of readdirSync(SHARED).filter((f) => f.endsWith(".ts"))) {
      const source = readFileSync(join(SHARED, file), "utf8");
      const imported = [...source.matchAll(/from "([^"]+)"/g)].map((m) => m[1]);
      const outside = imported.filter((path) => !path.startsWith("./") && path !== "geojson");
      assert.deepEqual(outside, [], `${file} imports ${outside.join(", ")}`);
    }
  });

  it("names the analysis types the server implements, each once", () => {
    assert.deepEqual(ANALYSIS_CATALOGUE.map((t) => t.name).sort(), [...ANALYSIS_TYPES].sort());
  });

  it("is what the server validates against and what the client offers", () => {
    assert.deepEqual(Object.keys(SERVER_TRAVEL_MODES), [...TRAVEL_MODES]);
    assert.deepEqual(
      FORM_TRAVEL_MODES.map((m) => m.value),
      [...TRAVEL_MODES],
    );
    assert.equal(DEFAULT_DAY_TYPES, "Average Day|17,Average Weekday|14,Average Weekend Day|67");
    assert.equal(
      DEFAULT_DAY_PARTS,
      "All Day|0023,Early AM|0005,Peak AM|0609,Mid-Day|1014,Peak PM|1518,Late PM|1923",
    );
  });

  it("keeps the counts panel's words for the shared values", () => {
    assert.deepEqual(
      PANEL_DAY_PARTS.map((p) => `${p.value} ${p.label}`),
      [
        "0 All day (00–23 h)",
        "1 Early AM (00–05 h)",
        "2 Peak AM (06–09 h)",
        "3 Mid-day (10–14 h)",
        "4 Peak PM (15–18 h)",
        "5 Late PM (19–23 h)",
      ],
    );
    assert.deepEqual(PANEL_DAY_TYPES.slice(0, 4), [
      { value: "all", label: "All days" },
      { value: "weekday", label: "Weekdays (Mon–Fri)" },
      { value: "weekend", label: "Weekend (Sat–Sun)" },
      { value: "monday", label: "Monday" },
    ]);
  });
});

describe("the POST /analyses request schema (src/domain/analyses/request.ts)", () => {
  it("knows the fields the validator reads, in the order misspellings are matched against", () => {
    assert.deepEqual(ANALYSIS_REQUEST_FIELDS, [
      "insight_login_email",
      "analysis_name",
      "analysis_type",
      "travel_mode_type",
      "output_type",
      "oz_sets",
      ...TYPE_FIELDS,
      "date_ranges",
      "day_types",
      "day_parts",
      "traveler_attributes",
      "trip_attributes",
      "country",
      "description",
      "tags",
      "unit_of_measurement",
      ...Object.keys(DEFAULT_BINS),
      "enable_speed_percentile",
      "speed_percentile_bins",
      ...VENDOR_OPTION_FIELDS,
      ...VENDOR_FIELDS_NOT_USED,
    ]);
  });
});
