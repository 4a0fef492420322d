import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { flowUnits, resultUnit } from "../../src/web/client/views/analyses/units.js";
import { OUTPUT_TYPES } from "../../src/domain/analyses/spec.js";

describe("web analyses: units by output type", () => {
  it("labels flows as an index, calibrated trips per day or trips over the period", () => {
    assert.equal(flowUnits("index").column, "Index (trips/day)");
    assert.equal(flowUnits("volume").column, "Trips/day");
    assert.equal(flowUnits("trip_counts").column, "Trips (period total)");
    // The flows of aadt and zone_counts analyses are index values; their extra metric carries the unit.
    assert.equal(flowUnits("aadt").column, "Index (trips/day)");
    assert.match(resultUnit("aadt"), /^AADT/);
  });

  it("names a distinct unit for every output type of the API", () => {
    const units = OUTPUT_TYPES.map(resultUnit);
    assert.equal(new Set(units).size, OUTPUT_TYPES.length);
  });
});
